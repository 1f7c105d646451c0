"""API tokens limited to a workspace or one set of it: the API knows nothing outside the
limit (404, as for what the owner may not see); an unlimited token works as before."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from audit import services
from audit.models import ApiToken, AuditSet, Claim, Job, Membership, Workspace
from tests.conftest import FIXTURES, import_file
from tests.factories import AuditSetFactory, UserFactory, default_workspace

pytestmark = pytest.mark.django_db

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"


def _client(token_text: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token_text}")


def _queue_import(audit_set: AuditSet, user) -> Job:
    return services.job_import_create(
        upload=SimpleUploadedFile("answers.jsonl", HANDMADE.read_bytes()),
        audit_set=audit_set,
        new_set_name="",
        fmt="auto",
        user=user,
    )


@pytest.fixture
def world(lead):
    """The lead leads two workspaces: Default with sets Alpha and Alpha two, Billing with
    set Beta; Alpha and Beta have claims and an import job each."""
    billing = Workspace.objects.create(name="Billing", slug="billing")
    Membership.objects.create(workspace=billing, user=lead, role=Membership.Role.LEAD)
    alpha = AuditSetFactory(name="Alpha", workspace=default_workspace())
    alpha_two = AuditSetFactory(name="Alpha two", workspace=default_workspace())
    beta = AuditSetFactory(name="Beta", workspace=billing)
    import_file(alpha, HANDMADE)
    import_file(beta, HANDMADE)
    return {
        "default": default_workspace(),
        "billing": billing,
        "alpha": alpha,
        "alpha_two": alpha_two,
        "beta": beta,
        "alpha_job": _queue_import(alpha, lead),
        "beta_job": _queue_import(beta, lead),
        "alpha_claim": Claim.objects.filter(answer__audit_set=alpha).order_by("pk").first(),
        "beta_claim": Claim.objects.filter(answer__audit_set=beta).order_by("pk").first(),
    }


def _set_paths(audit_set: AuditSet, claim: Claim, job: Job) -> list[str]:
    """A read of each kind: the set, its settings, claims, sheets, gold, a claim, a job, an
    export and a decision."""
    base = f"/api/v1/sets/{audit_set.pk}"
    return [
        base,
        f"{base}/settings",
        f"{base}/answers",
        f"{base}/claims",
        f"{base}/sheets",
        f"{base}/gold",
        f"{base}/report",
        f"{base}/agreement",
        f"{base}/decision?system=handmade%20v1",
        f"{base}/exports/csv",
        f"/api/v1/claims/{claim.pk}",
        f"/api/v1/jobs/{job.pk}",
    ]


def _names(response) -> list[str]:
    assert response.status_code == 200, response.content[:300]
    return [row["name"] for row in json.loads(response.content)]


def _job_ids(response) -> list[int]:
    assert response.status_code == 200, response.content[:300]
    return [row["id"] for row in json.loads(response.content)["items"]]


# ------------------------------------------------------------------ a workspace's token


def test_a_workspace_token_lists_only_that_workspaces_sets_and_jobs(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="read", workspace=world["billing"]
    )
    client = _client(text)
    assert _names(client.get("/api/v1/sets")) == ["Beta"]
    assert _job_ids(client.get("/api/v1/jobs")) == [world["beta_job"].pk]


def test_a_workspace_token_gets_404_on_everything_of_another_workspace(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="read", workspace=world["default"]
    )
    client = _client(text)
    inside = _set_paths(world["alpha"], world["alpha_claim"], world["alpha_job"])
    outside = _set_paths(world["beta"], world["beta_claim"], world["beta_job"])
    assert {path: client.get(path).status_code for path in inside} == dict.fromkeys(inside, 200)
    assert {path: client.get(path).status_code for path in outside} == dict.fromkeys(outside, 404)


def test_a_workspace_token_cannot_write_into_another_workspace(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="write", workspace=world["default"]
    )
    client = _client(text)
    beta = world["beta"]
    jobs_before = Job.objects.count()

    def upload() -> SimpleUploadedFile:
        return SimpleUploadedFile("answers.jsonl", HANDMADE.read_bytes())

    into_set = client.post("/api/v1/imports", {"file": upload(), "set": beta.pk})
    into_new_set = client.post(
        "/api/v1/imports", {"file": upload(), "new_set_name": "Gamma", "workspace": "billing"}
    )
    new_set = client.post(
        "/api/v1/sets",
        json.dumps({"name": "Gamma", "workspace": "billing"}),
        content_type="application/json",
    )
    settings = client.patch(
        f"/api/v1/sets/{beta.pk}/settings",
        json.dumps({"name": "Taken over"}),
        content_type="application/json",
    )
    cancel = client.post(f"/api/v1/jobs/{world['beta_job'].pk}/cancel")

    assert [r.status_code for r in (into_set, into_new_set, new_set, settings, cancel)] == [
        404,
        404,
        404,
        404,
        404,
    ]
    assert Job.objects.count() == jobs_before
    assert not AuditSet.objects.filter(name="Gamma").exists()
    beta.refresh_from_db()
    assert beta.name == "Beta"
    assert Job.objects.get(pk=world["beta_job"].pk).status == Job.Status.QUEUED


def test_a_workspace_token_makes_a_new_set_in_its_own_workspace_without_naming_it(world, lead):
    # The lead leads two workspaces, so an unlimited token must name one; this one has one.
    _token, text = services.token_create(
        user=lead, name="ci", scope="write", workspace=world["billing"]
    )
    response = _client(text).post(
        "/api/v1/sets", json.dumps({"name": "Gamma"}), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert AuditSet.objects.get(name="Gamma").workspace == world["billing"]


# ------------------------------------------------------------------------ a set's token


def test_a_set_token_sees_only_its_set(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="read", audit_set=world["alpha"]
    )
    client = _client(text)
    alpha_two = world["alpha_two"]
    assert _names(client.get("/api/v1/sets")) == ["Alpha"]
    assert _job_ids(client.get("/api/v1/jobs")) == [world["alpha_job"].pk]
    assert client.get(f"/api/v1/sets/{world['alpha'].pk}/claims").status_code == 200
    others = [
        f"/api/v1/sets/{alpha_two.pk}",
        f"/api/v1/sets/{alpha_two.pk}/settings",
        f"/api/v1/sets/{alpha_two.pk}/claims",
        f"/api/v1/sets/{alpha_two.pk}/exports/csv",
        f"/api/v1/claims/{world['beta_claim'].pk}",
        f"/api/v1/jobs/{world['beta_job'].pk}",
    ]
    assert {path: client.get(path).status_code for path in others} == dict.fromkeys(others, 404)


def test_a_set_token_makes_no_new_set(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="write", audit_set=world["alpha"]
    )
    client = _client(text)
    new_set = client.post(
        "/api/v1/sets", json.dumps({"name": "Gamma"}), content_type="application/json"
    )
    upload = SimpleUploadedFile("answers.jsonl", HANDMADE.read_bytes())
    into_new_set = client.post("/api/v1/imports", {"file": upload, "new_set_name": "Gamma"})
    into_other_set = client.post(
        "/api/v1/imports",
        {
            "file": SimpleUploadedFile("a.jsonl", HANDMADE.read_bytes()),
            "set": world["alpha_two"].pk,
        },
    )
    assert [new_set.status_code, into_new_set.status_code, into_other_set.status_code] == [
        403,
        403,
        404,
    ]
    assert json.loads(new_set.content)["detail"] == (
        "This token is limited to one set; it makes no new set."
    )
    assert not AuditSet.objects.filter(name="Gamma").exists()


def test_me_reports_the_tokens_workspace_and_set(world, lead):
    _token, text = services.token_create(
        user=lead, name="ci", scope="read", audit_set=world["beta"]
    )
    assert json.loads(_client(text).get("/api/v1/me").content) == {
        "username": "lead",
        "lead": True,
        "scope": "read",
        "token": "ci",
        "workspace": "billing",
        "set": world["beta"].pk,
    }


def test_a_site_admins_workspace_token_is_limited_too(world):
    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    _token, text = services.token_create(
        user=admin, name="ci", scope="read", workspace=world["billing"]
    )
    client = _client(text)
    assert _names(client.get("/api/v1/sets")) == ["Beta"]
    assert client.get(f"/api/v1/sets/{world['alpha'].pk}/settings").status_code == 404


# ------------------------------------------------------------- old and unlimited tokens


def test_an_unlimited_token_works_in_every_workspace_as_before(world, lead):
    token, text = services.token_create(user=lead, name="ci", scope="read")
    client = _client(text)
    assert (token.workspace, token.audit_set) == (None, None)
    assert _names(client.get("/api/v1/sets")) == ["Alpha", "Alpha two", "Beta"]
    assert _job_ids(client.get("/api/v1/jobs")) == [world["alpha_job"].pk, world["beta_job"].pk]
    paths = _set_paths(world["beta"], world["beta_claim"], world["beta_job"])
    assert {path: client.get(path).status_code for path in paths} == dict.fromkeys(paths, 200)
    me = json.loads(client.get("/api/v1/me").content)
    assert (me["workspace"], me["set"]) == (None, None)


def test_deleting_the_set_deletes_the_tokens_limited_to_it(world, lead):
    token, _text = services.token_create(
        user=lead, name="ci", scope="read", audit_set=world["alpha_two"]
    )
    world["alpha_two"].delete()
    assert not ApiToken.objects.filter(pk=token.pk).exists()


# ------------------------------------------------------------------------- token_create


def test_token_create_refuses_a_workspace_the_user_is_not_in(world, reviewer_a):
    with pytest.raises(services.TokenScopeRefused) as refused:
        services.token_create(user=reviewer_a, name="ci", scope="read", workspace=world["billing"])
    assert str(refused.value) == "You are not a member of the workspace “Billing”."
    assert not ApiToken.objects.filter(user=reviewer_a).exists()


def test_token_create_refuses_a_set_outside_the_workspace(world, lead):
    with pytest.raises(services.TokenScopeRefused) as refused:
        services.token_create(
            user=lead, name="ci", scope="read", workspace=world["default"], audit_set=world["beta"]
        )
    assert str(refused.value) == "The workspace “Default” has no set “Beta” that you may open."
    assert not ApiToken.objects.exists()


def test_token_create_refuses_a_set_the_user_may_not_open(world, reviewer_a):
    # A reviewer of the workspace who does not review Alpha two.
    with pytest.raises(services.TokenScopeRefused):
        services.token_create(
            user=reviewer_a, name="ci", scope="read", audit_set=world["alpha_two"]
        )
    assert not ApiToken.objects.filter(user=reviewer_a).exists()


# ---------------------------------------------------------------------- the tokens page


def test_the_tokens_page_makes_a_limited_token_and_shows_each_tokens_reach(world, lead, client_for):
    services.token_create(user=lead, name="old", scope="read")
    client = client_for(lead)
    response = client.post(
        "/tokens/",
        {
            "name": "nightly",
            "scope": "write",
            "workspace": world["billing"].pk,
            "audit_set": world["beta"].pk,
            "expires": "",
        },
    )
    assert response.status_code == 200
    token = ApiToken.objects.get(name="nightly")
    assert (token.workspace, token.audit_set) == (world["billing"], world["beta"])
    html = response.content.decode()
    assert "<td>Read and write · workspace Billing · set Beta</td>" in html
    assert "<td>Read only · all your workspaces</td>" in html
    assert '<option value="{}">Billing · Beta</option>'.format(world["beta"].pk) in html


def test_the_tokens_page_refuses_a_set_of_another_workspace(world, lead, client_for):
    response = client_for(lead).post(
        "/tokens/",
        {
            "name": "nightly",
            "scope": "read",
            "workspace": world["default"].pk,
            "audit_set": world["beta"].pk,
            "expires": "",
        },
    )
    assert response.status_code == 200
    assert "The workspace “Default” has no set “Beta” that you may open." in (
        response.content.decode()
    )
    assert not ApiToken.objects.filter(name="nightly").exists()
