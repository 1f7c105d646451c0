"""The API's authorization matrix: every operation of the OpenAPI schema, requested as
anonymous, reviewer A, reviewer B, a lead and a lead's read-only token, returns exactly the
status written here. An operation without an entry fails the test, so a new endpoint cannot
ship without deciding who may use it."""

from __future__ import annotations

import itertools

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from audit import services
from audit.api import api
from audit.models import (
    Assignment,
    AuditSet,
    Claim,
    Job,
    JudgeRun,
    Membership,
    SuggestionSource,
    Webhook,
    WebhookDelivery,
    Workspace,
)
from audit.services import judges as judge_services
from tests.conftest import FIXTURES, api_client, import_file
from tests.factories import UserFactory, default_workspace

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "reviewer_a", "reviewer_b", "lead", "read_only")
NO = 401  # no token
RO = 403  # a read-only token that tries to write

# (path, method): (anonymous, reviewer A, reviewer B, lead, lead's read-only token)
# Reviewer A is assigned the claim; reviewer B reviews the same set but not that claim.
MATRIX: dict[tuple[str, str], tuple[int, int, int, int, int]] = {
    ("/api/v1/me", "GET"): (NO, 200, 200, 200, 200),
    ("/api/v1/sets", "GET"): (NO, 200, 200, 200, 200),
    ("/api/v1/sets", "POST"): (NO, 403, 403, 201, RO),
    ("/api/v1/sets/{set_id}", "GET"): (NO, 200, 200, 200, 200),
    ("/api/v1/sets/{set_id}/settings", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/settings", "PATCH"): (NO, 403, 403, 200, RO),
    ("/api/v1/imports", "POST"): (NO, 403, 403, 202, RO),
    ("/api/v1/jobs/{job_id}", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/jobs", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/jobs/{job_id}/cancel", "POST"): (NO, 403, 403, 202, RO),
    ("/api/v1/jobs/{job_id}/retry", "POST"): (NO, 403, 403, 409, RO),  # still queued
    ("/api/v1/sets/{set_id}/answers", "GET"): (NO, 200, 200, 200, 200),
    ("/api/v1/sets/{set_id}/claims", "GET"): (NO, 200, 200, 200, 200),
    # A claim exists for the reviewer it is assigned to, and for leads.
    ("/api/v1/claims/{claim_id}", "GET"): (NO, 200, 404, 200, 200),
    ("/api/v1/sets/{set_id}/sheets", "GET"): (NO, 200, 200, 200, 200),
    ("/api/v1/sets/{set_id}/gold", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/verdicts", "POST"): (NO, 403, 403, 200, RO),
    ("/api/v1/sets/{set_id}/suggestions", "POST"): (NO, 403, 403, 200, RO),
    ("/api/v1/sets/{set_id}/suggestions/file", "POST"): (NO, 403, 403, 200, RO),
    # Suggestions are the lead's to read: a reviewer sees them on the review page only, as
    # the set shows them (and not on a sheet the set withholds them from).
    ("/api/v1/sets/{set_id}/suggestions", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/suggestion-sources/{source_id}", "DELETE"): (NO, 403, 403, 204, RO),
    ("/api/v1/sets/{set_id}/suggestion-sources", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/agreement", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/report", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/suggestions/comparison", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/decision", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/exports/{fmt}", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/reviewers", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/reviewers", "POST"): (NO, 403, 403, 200, RO),
    # A reviewer replaced by themselves: refused, so every caller finds the same set.
    ("/api/v1/sets/{set_id}/reviewers/replace", "POST"): (NO, 403, 403, 422, RO),
    ("/api/v1/sets/{set_id}/controls", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/controls", "PATCH"): (NO, 403, 403, 200, RO),
    ("/api/v1/sets/{set_id}/controls", "POST"): (NO, 403, 403, 200, RO),
    ("/api/v1/sets/{set_id}/adjudication", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/compare", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/sets/{set_id}/judges", "GET"): (NO, 403, 403, 200, 200),
    # A loopback URL the egress rules refuse: the lead is told why (body.base_url).
    ("/api/v1/sets/{set_id}/judges", "POST"): (NO, 403, 403, 422, RO),
    ("/api/v1/judges/{judge_id}", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/judges/{judge_id}/versions", "POST"): (NO, 403, 403, 422, RO),
    ("/api/v1/judges/{judge_id}/threshold", "PUT"): (NO, 403, 403, 200, RO),
    # The judge's URL is refused, so it cannot run; and it has no calibration to accept.
    ("/api/v1/judges/{judge_id}/runs", "POST"): (NO, 403, 403, 409, RO),
    ("/api/v1/judge-runs/{run_id}", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/judges/{judge_id}/calibration", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/judges/{judge_id}/accept", "POST"): (NO, 403, 403, 409, RO),
    ("/api/v1/claims/{claim_id}/answers-question", "PUT"): (NO, 403, 403, 200, RO),
    ("/api/v1/sets/{set_id}/webhooks", "GET"): (NO, 403, 403, 200, 200),
    # Loopback is refused as a webhook's address: the lead's request is checked, not added.
    ("/api/v1/sets/{set_id}/webhooks", "POST"): (NO, 403, 403, 422, RO),
    ("/api/v1/workspaces/{slug}/webhooks", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/workspaces/{slug}/webhooks", "POST"): (NO, 403, 403, 422, RO),
    ("/api/v1/webhooks/{webhook_id}/deliveries", "GET"): (NO, 403, 403, 200, 200),
    ("/api/v1/webhooks/{webhook_id}/deliveries/{delivery}/redeliver", "POST"): (
        NO,
        403,
        403,
        202,
        RO,
    ),
    # Last: the lead removes the hook the rows above use.
    ("/api/v1/webhooks/{webhook_id}", "DELETE"): (NO, 403, 403, 204, RO),
}
# The schema and its docs page are public: they describe the API, not any data.
PUBLIC = ("/api/v1/openapi.json", "/api/v1/docs")

_names = itertools.count()


def _operations() -> set[tuple[str, str]]:
    schema = api.get_openapi_schema(path_prefix="/api/v1/")
    return {(path, method.upper()) for path, ops in schema["paths"].items() for method in ops}


@pytest.fixture
def world(lead):
    reviewer_a = UserFactory(username="rev_a", role="reviewer")
    reviewer_b = UserFactory(username="rev_b", role="reviewer")
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Matrix")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=1, by=lead
    )
    claim = Claim.objects.filter(assignments__reviewer=reviewer_a).order_by("pk").first()
    assert not Assignment.objects.filter(claim=claim, reviewer=reviewer_b).exists()
    job = Job.objects.create(kind=Job.Kind.IMPORT, audit_set=audit_set, token="api-matrix")
    # Set up while loopback is allowed; the requests then find its URL refused.
    with override_settings(EGRESS_ALLOW=["127.0.0.1"]):
        judge = judge_services.judge_create(
            audit_set=audit_set,
            fields={
                "name": "matrix",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "m",
                "min_kappa": 0.0,
                "min_gold": 30,
            },
            user=lead,
        )
    run = JudgeRun.objects.create(
        judge=judge, version=judge_services.judge_current_version(judge), claim_ids=[]
    )
    hook = Webhook.objects.create(
        audit_set=audit_set, url="https://hooks.example.org/in", secret="s", events=["x"]
    )
    delivery = WebhookDelivery.objects.create(webhook=hook, event="x", body="{}")
    source = SuggestionSource.objects.create(audit_set=audit_set, name="nli", version="0")
    return {
        "clients": {
            "anonymous": Client(),
            "reviewer_a": api_client(reviewer_a),
            "reviewer_b": api_client(reviewer_b),
            "lead": api_client(lead),
            "read_only": api_client(lead, scope="read"),
        },
        "ids": {
            "set_id": audit_set.pk,
            "claim_id": claim.pk,
            "job_id": job.pk,
            "fmt": "jsonl",
            "judge_id": judge.pk,
            "run_id": run.pk,
            "slug": audit_set.workspace.slug,
            "webhook_id": hook.pk,
            "delivery": delivery.uuid,
            "source_id": source.pk,
        },
        "set": audit_set,
    }


def _request(client: Client, path: str, method: str, world: dict):
    url = path.format(**world["ids"])
    if path.endswith("/decision"):
        return client.get(url, {"system": "handmade v1"})
    if method == "GET":
        return client.get(url)
    if path == "/api/v1/sets":
        body = {"name": f"Matrix {next(_names)}"}
        return client.post(url, body, content_type="application/json")
    if method == "PUT" and path.endswith("/threshold"):
        return client.put(url, {"min_kappa": 0.5, "min_gold": 30}, content_type="application/json")
    if method == "PUT" and path.endswith("/answers-question"):
        return client.put(url, {"value": True}, content_type="application/json")
    if method == "PATCH":
        return client.patch(url, {"description": "x"}, content_type="application/json")
    if path == "/api/v1/imports":
        upload = SimpleUploadedFile(
            "run.jsonl", (FIXTURES / "demo" / "handmade.jsonl").read_bytes()
        )
        return client.post(url, {"file": upload, "set": world["set"].pk})
    if path.endswith(("/cancel", "/retry")):
        # Each caller finds the job queued: a lead cancels it, and then it cannot run
        # again (its upload is gone).
        Job.objects.filter(pk=world["ids"]["job_id"]).update(status=Job.Status.QUEUED)
        return client.post(url)
    if method == "DELETE":
        return client.delete(url)
    if path.endswith("/webhooks") and method == "POST":
        body = {"url": "http://127.0.0.1:9/hook", "events": ["set.reviewed"]}
        return client.post(url, body, content_type="application/json")
    if path.endswith("/redeliver"):
        return client.post(url)
    if path.endswith("/verdicts"):
        line = b'{"judge": "j", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "unclear"}'
        return client.post(url, {"file": SimpleUploadedFile("judge.jsonl", line)})
    if path.endswith("/suggestions"):
        body = {"name": "nli", "version": "1", "suggestions": [{"claim": "hm-1-a claim 1"}]}
        return client.post(url, body, content_type="application/json")
    if path.endswith("/suggestions/file"):
        upload = SimpleUploadedFile("nli.jsonl", b'{"claim": "hm-1-a claim 1"}\n')
        return client.post(url, {"file": upload, "name": "nli", "version": "1"})
    bodies = {
        "/reviewers": {"reviewers": ["rev_a", "rev_b"], "overlap": 1},
        "/reviewers/replace": {"leaving": "rev_a", "joining": "rev_a"},
        "/controls": {"claims": [world["ids"]["claim_id"]]},
        "/judges": {"name": "new", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "/versions": {"max_concurrency": 3},
        "/runs": {"subset": "all"},
        "/accept": {},
    }
    for end, body in bodies.items():
        if path.endswith(end):
            return client.post(url, body, content_type="application/json")
    raise AssertionError(f"no request written for {method} {path}")


def test_every_api_operation_has_an_entry():
    operations = _operations()
    assert sorted(operations - set(MATRIX)) == []
    assert sorted(set(MATRIX) - operations) == []


def test_every_api_operation_answers_each_role_as_written(world):
    got, expected = {}, {}
    for (path, method), statuses in MATRIX.items():
        expected[(path, method)] = statuses
        got[(path, method)] = tuple(
            _request(world["clients"][role], path, method, world).status_code for role in ROLES
        )
    assert got == expected


def test_an_undeclared_method_is_405_for_everyone(world):
    for path in {path for path, _method in MATRIX}:
        declared = {method for p, method in MATRIX if p == path}
        for method in {"GET", "POST", "PATCH", "DELETE"} - declared:
            url = path.format(**world["ids"])
            for role in ROLES:
                client = world["clients"][role]
                response = getattr(client, method.lower())(url)
                assert response.status_code in (405, 401), (method, url, role)
                if role != "anonymous":
                    assert response.status_code == 405, (method, url, role)


def test_a_reviewer_outside_a_set_gets_404_on_its_pages_and_403_on_lead_ones(world):
    outsider = api_client(UserFactory(username="rev_c", role="reviewer"))
    for (path, method), statuses in MATRIX.items():
        if "{set_id}" not in path or method != "GET":
            continue
        expected = 404 if statuses[1] == 200 else statuses[1]
        response = _request(outsider, path, method, world)
        assert response.status_code == expected, path


def test_errors_are_json_with_a_message_for_every_role(world):
    for (path, method), statuses in MATRIX.items():
        for role, status in zip(ROLES, statuses, strict=True):
            if status < 400:
                continue
            response = _request(world["clients"][role], path, method, world)
            assert response["Content-Type"] == "application/problem+json", (path, role)
            assert response.json()["detail"], (path, role)


def test_the_schema_and_docs_are_public(world):
    for url in PUBLIC:
        assert Client().get(url).status_code == 200


def test_workspaces_bound_every_operation(world):
    """A lead of workspace B gets the 404 a stranger gets on A's set, claims and jobs,
    whatever the method; a signed-in member of nothing gets the lead operations' 403
    before any lookup and a 404 on the rest; each lists only their own sets."""
    other = Workspace.objects.create(name="Legal", slug="legal")
    lead_b = UserFactory(username="lead_b")
    Membership.objects.create(workspace=other, user=lead_b, role="lead")
    AuditSet.objects.create(workspace=other, name="Legal answers")
    clients = {"lead_b": api_client(lead_b), "stranger": api_client(UserFactory(username="nobody"))}

    for (path, method), statuses in MATRIX.items():
        if not any(
            key in path for key in ("{set_id}", "{claim_id}", "{job_id}", "{judge_id}", "{run_id}")
        ):
            continue
        lead_only = statuses[1] == 403  # reviewer A is refused as a non-lead
        got = {
            role: _request(client, path, method, world).status_code
            for role, client in clients.items()
        }
        assert got == {"lead_b": 404, "stranger": 403 if lead_only else 404}, (path, method)

    assert [s["name"] for s in clients["lead_b"].get("/api/v1/sets").json()] == ["Legal answers"]
    assert clients["stranger"].get("/api/v1/sets").json() == []
    created = clients["lead_b"].post(
        "/api/v1/sets", {"name": "Matrix"}, content_type="application/json"
    )
    assert created.status_code == 201
    assert AuditSet.objects.get(pk=created.json()["id"]).workspace == other


def _fresh_targets(world: dict) -> None:
    hook = Webhook.objects.create(
        audit_set=world["set"], url="https://hooks.example.org/in", secret="s", events=["x"]
    )
    delivery = WebhookDelivery.objects.create(webhook=hook, event="x", body="{}")
    source = SuggestionSource.objects.create(
        audit_set=world["set"], name="nli", version=f"fresh {hook.pk}"
    )
    world["ids"].update(webhook_id=hook.pk, delivery=delivery.uuid, source_id=source.pk)


def test_an_owner_of_the_workspace_and_a_site_admin_may_do_what_its_lead_may(world):
    owner = UserFactory(username="owner_a")
    Membership.objects.create(workspace=default_workspace(), user=owner, role="owner")
    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    lead_column = {operation: statuses[3] for operation, statuses in MATRIX.items()}

    for user in (owner, admin):
        _fresh_targets(world)  # the ones before were removed by the DELETE rows
        client = api_client(user)
        got = {operation: _request(client, *operation, world).status_code for operation in MATRIX}
        assert got == lead_column, user.username
