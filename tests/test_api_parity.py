"""Every API operation does what a page does for the same action: the same rows written, the
same figures shown, the same refusal. PARITY names, for each operation of the schema, the test
that shows it (here or beside the door's own tests), or why no page does that action; a new
endpoint without an entry fails the suite."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from audit.api import api
from audit.judgments import NOT_SUPPORTED, PARTIAL, SUPPORTED
from audit.models import (
    AuditSet,
    Job,
    Membership,
    Workspace,
)
from tests.conftest import (
    FIXTURES,
    api_client,
    import_file,
    queue_import,
    run_queued_jobs,
    stored_import_rows,
)
from tests.factories import (
    AuditSetFactory,
    UserFactory,
    claim_at,
    default_workspace,
    evidence_ref,
    submit_sheet,
)

pytestmark = pytest.mark.django_db

HERE = "tests/test_api_parity.py"
LEAD_DOORS = "tests/test_lead_doors.py"
SET_DOORS = "tests/test_set_doors.py"
JUDGES = "tests/test_api_judges.py"
HOOKS = "tests/test_api_webhooks.py"
V1 = "/api/v1"
FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."

# Each operation, as the schema names it under /api/v1, and the test that shows it.
_TESTS: dict[str, tuple[str, str]] = {
    # answers, claims, sheets and gold
    "GET /sets/{set_id}/answers": (HERE, "test_answers_are_the_set_pages_rows"),
    "GET /sets/{set_id}/claims": (
        HERE,
        "test_claims_are_the_claims_pages_rows_and_a_reviewers_queue",
    ),
    "GET /claims/{claim_id}": (HERE, "test_a_claim_shows_the_sheets_and_gold_its_pages_show"),
    "GET /sets/{set_id}/sheets": (
        HERE,
        "test_sheets_are_those_the_adjudication_and_review_pages_show",
    ),
    "GET /sets/{set_id}/gold": (HERE, "test_gold_is_the_gold_the_adjudication_page_shows"),
    # imports and jobs
    "POST /imports": (HERE, "test_an_import_through_the_api_stores_what_the_upload_page_stores"),
    "GET /jobs": (HERE, "test_jobs_are_the_job_list_pages_rows"),
    "GET /jobs/{job_id}": (HERE, "test_a_job_is_its_pages_status_and_progress"),
    "POST /jobs/{job_id}/cancel": (
        HERE,
        "test_cancelling_through_the_api_cancels_as_the_page_does",
    ),
    "POST /jobs/{job_id}/retry": (HERE, "test_retrying_through_the_api_queues_as_the_page_does"),
    # judges
    "GET /sets/{set_id}/judges": (HERE, "test_judges_are_the_judge_list_pages"),
    "POST /sets/{set_id}/judges": (
        JUDGES,
        "test_creating_a_judge_through_the_page_or_the_api_stores_the_same",
    ),
    "GET /judges/{judge_id}": (HERE, "test_a_judge_is_its_detail_pages"),
    "POST /judges/{judge_id}/versions": (
        JUDGES,
        "test_a_new_version_and_a_threshold_through_both_doors_store_the_same",
    ),
    "PUT /judges/{judge_id}/threshold": (
        JUDGES,
        "test_a_new_version_and_a_threshold_through_both_doors_store_the_same",
    ),
    "POST /judges/{judge_id}/runs": (
        HERE,
        "test_a_run_started_through_the_api_is_the_run_the_page_starts",
    ),
    "GET /judge-runs/{run_id}": (
        JUDGES,
        "test_a_run_through_the_api_is_a_job_whose_verdicts_the_run_read_pages",
    ),
    "GET /judges/{judge_id}/calibration": (
        JUDGES,
        "test_calibration_and_accept_give_the_pages_figures_and_store_the_same_acceptance",
    ),
    "POST /judges/{judge_id}/accept": (
        JUDGES,
        "test_calibration_and_accept_give_the_pages_figures_and_store_the_same_acceptance",
    ),
    "PUT /claims/{claim_id}/answers-question": (
        JUDGES,
        "test_a_lead_marks_a_claim_as_answering_through_the_api_as_the_list_does",
    ),
    # a lead's review work
    "GET /sets/{set_id}/reviewers": (
        LEAD_DOORS,
        "test_the_reviewers_read_gives_the_progress_pages_rows",
    ),
    "POST /sets/{set_id}/reviewers": (
        LEAD_DOORS,
        "test_assigning_through_the_api_writes_the_assignments_the_page_writes",
    ),
    "POST /sets/{set_id}/reviewers/replace": (
        LEAD_DOORS,
        "test_replacing_a_reviewer_through_the_api_moves_what_the_page_moves",
    ),
    "GET /sets/{set_id}/controls": (
        LEAD_DOORS,
        "test_the_controls_read_gives_the_calibration_pages_rows",
    ),
    "PATCH /sets/{set_id}/controls": (
        LEAD_DOORS,
        "test_control_settings_through_the_api_are_those_the_page_saves",
    ),
    "POST /sets/{set_id}/controls": (
        LEAD_DOORS,
        "test_marking_controls_through_the_api_marks_what_the_page_marks",
    ),
    "GET /sets/{set_id}/adjudication": (
        LEAD_DOORS,
        "test_the_adjudication_queue_lists_the_pages_rows_in_its_order",
    ),
    "GET /sets/{set_id}/compare": (LEAD_DOORS, "test_compare_gives_the_pages_comparison"),
    # results
    "POST /sets/{set_id}/verdicts": (
        HERE,
        "test_verdicts_pushed_through_the_api_are_those_the_upload_page_stores",
    ),
    "GET /sets/{set_id}/agreement": (HERE, "test_agreement_is_the_dashboards_figures"),
    "GET /sets/{set_id}/report": (HERE, "test_the_report_is_the_report_pages_figures"),
    "GET /sets/{set_id}/decision": (
        HERE,
        "test_the_decision_is_the_report_pages_and_names_its_failing_claims",
    ),
    "GET /sets/{set_id}/exports/{fmt}": (
        HERE,
        "test_every_export_is_the_download_pages_file_byte_for_byte",
    ),
    # sets
    "GET /me": (HERE, "test_me_is_the_token_the_tokens_page_made"),
    "GET /sets": (HERE, "test_sets_are_the_set_list_pages_rows"),
    "POST /sets": (SET_DOORS, "test_both_doors_create_the_same_rows"),
    "GET /sets/{set_id}": (HERE, "test_a_set_is_the_set_page_and_refused_where_the_page_is"),
    "GET /sets/{set_id}/settings": (HERE, "test_settings_are_the_values_the_settings_pages_hold"),
    "PATCH /sets/{set_id}/settings": (
        SET_DOORS,
        "test_a_guideline_edit_through_the_api_is_a_version_with_author_and_note_as_on_the_page",
    ),
    # webhooks
    "GET /sets/{set_id}/webhooks": (HERE, "test_a_sets_hooks_are_its_hooks_pages"),
    "POST /sets/{set_id}/webhooks": (
        HERE,
        "test_a_set_hook_added_through_the_api_is_the_one_the_page_adds",
    ),
    "GET /workspaces/{slug}/webhooks": (HERE, "test_a_workspaces_hooks_are_its_hooks_pages"),
    "POST /workspaces/{slug}/webhooks": (
        HERE,
        "test_a_workspace_hook_added_through_the_api_is_the_one_the_page_adds",
    ),
    "DELETE /webhooks/{webhook_id}": (
        HERE,
        "test_removing_a_hook_through_the_api_removes_as_the_page_does",
    ),
    "GET /webhooks/{webhook_id}/deliveries": (
        HOOKS,
        "test_page_and_api_show_the_same_deliveries_and_redeliver_alike",
    ),
    "POST /webhooks/{webhook_id}/deliveries/{delivery}/redeliver": (
        HOOKS,
        "test_page_and_api_show_the_same_deliveries_and_redeliver_alike",
    ),
}
PARITY: dict[str, str] = {
    f"{op.split()[0]} {V1}{op.split()[1]}": f"{f}::{t}" for op, (f, t) in _TESTS.items()
}

# An operation no page does, with why: none today. A reason here is a promise that no page
# does that action; prefer a parity test.
API_ONLY: dict[str, str] = {}


# ------------------------------------------------------------------------------ registry


def _operations() -> set[str]:
    schema = api.get_openapi_schema()
    return {f"{method.upper()} {path}" for path, ops in schema["paths"].items() for method in ops}


def test_every_operation_has_a_parity_test_or_a_reason():
    assert not set(PARITY) & set(API_ONLY)
    assert set(PARITY) | set(API_ONLY) == _operations()
    assert all(reason.strip() for reason in API_ONLY.values())


def test_every_named_parity_test_exists():
    missing = []
    for name in set(PARITY.values()):
        path, _, function = name.partition("::")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        if not callable(getattr(module, function, None)) or not function.startswith("test_"):
            missing.append(name)
    assert missing == []


# ------------------------------------------------------------------------------ fixtures


@pytest.fixture
def twin(handmade):
    """A second set with the same answers as `handmade`: one door writes each."""
    twin = AuditSetFactory(name="Twin", workspace=handmade.workspace)
    import_file(twin, FIXTURES / "demo" / "handmade.jsonl")
    return twin


@pytest.fixture
def outsider(db):
    """A lead of another workspace: every set of this one is unknown to them."""
    user = UserFactory(username="outsider")
    Membership.objects.create(
        user=user, workspace=Workspace.objects.create(name="Other", slug="other"), role="lead"
    )
    return user


@pytest.fixture
def judged(opened, reviewer_a, reviewer_b):
    """Sheets on four claims of hm-1-a: two agreed (gold), two disputed; one half done."""
    c0, c1, c2, c3 = (claim_at("hm-1-a", n) for n in range(4))
    for claim, (a, b) in zip(
        (c0, c1, c2, c3),
        [
            (SUPPORTED, SUPPORTED),
            (SUPPORTED, PARTIAL),
            (NOT_SUPPORTED, NOT_SUPPORTED),
            (PARTIAL, NOT_SUPPORTED),
        ],
        strict=True,
    ):
        for reviewer, judgment in ((reviewer_a, a), (reviewer_b, b)):
            cited = () if judgment == NOT_SUPPORTED else (evidence_ref(claim, 1, FULL_TIME),)
            submit_sheet(reviewer, claim, judgment, *cited, seconds=20)
    half = claim_at("hm-2-a", 0)
    submit_sheet(reviewer_a, half, NOT_SUPPORTED, seconds=20)
    return {"claims": [c0, c1, c2, c3], "half": half}


def _api(path: str) -> str:
    return f"{V1}/{path}"


# -------------------------------------------------------------- answers, claims, sheets, gold


def test_answers_are_the_set_pages_rows(opened, lead, reviewer_a, client_for):
    for user in (lead, reviewer_a):
        page = client_for(user).get(reverse("audit:set-detail", args=[opened.pk]))
        body = api_client(user).get(_api(f"sets/{opened.pk}/answers"), {"limit": 200}).json()
        shown = sorted(
            (row.record.pk, row.record.external_id, row.record.system)
            for row in page.context["table"].page.object_list
        )
        listed = sorted((a["id"], a["external_id"], a["system"]) for a in body["items"])
        assert listed == shown
        assert len(listed) == opened.answers.count() > 1


def test_claims_are_the_claims_pages_rows_and_a_reviewers_queue(
    opened, judged, lead, reviewer_a, client_for
):
    page = client_for(lead).get(reverse("audit:set-claims", args=[opened.pk]), {"per_page": 500})
    body = api_client(lead).get(_api(f"sets/{opened.pk}/claims"), {"limit": 500}).json()
    rows = list(page.context["table"].page.object_list)
    shown = sorted((row.record.pk, row.record.status) for row in rows)
    listed = sorted((c["id"], c["status"]) for c in body["items"])
    assert listed == shown
    assert len({status for _, status in shown}) >= 3

    # A reviewer: the claims of their queue, as many done as the home page counts.
    home = client_for(reviewer_a).get(reverse("audit:home"))
    (row, _state) = next(r for r in home.context["my_sets"] if r[0].pk == opened.pk)
    mine = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/claims"), {"limit": 500}).json()
    assert len(mine["items"]) == row.assigned
    assert sum(c["my_sheet"] == "submitted" for c in mine["items"]) == row.done == 5
    assert all("status" not in c for c in mine["items"])


def test_a_claim_shows_the_sheets_and_gold_its_pages_show(
    opened, judged, lead, reviewer_a, reviewer_b, client_for
):
    for claim in judged["claims"]:
        page = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk]))
        body = api_client(lead).get(_api(f"claims/{claim.pk}")).json()
        assert [(s["id"], s["judgment"], s["reviewer"]) for s in body["sheets"]] == [
            (c["sheet"].pk, c["sheet"].judgment, c["sheet"].reviewer.username)
            for c in page.context["sheets"]
        ]
        gold = page.context["gold"]
        assert (body["gold"] or {}).get("judgment") == (gold.judgment if gold else None)
    assert api_client(lead).get(_api(f"claims/{judged['claims'][0].pk}")).json()["gold"]

    # A reviewer sees their own sheet only, as on the review page, before and after B submits.
    half = judged["half"]
    for reviewer in (reviewer_a, reviewer_b):
        page = client_for(reviewer).get(reverse("audit:review-claim", args=[half.pk]))
        body = api_client(reviewer).get(_api(f"claims/{half.pk}")).json()
        own = page.context["sheet"]
        assert [
            (s["reviewer"], s["judgment"]) for s in body["sheets"] if s["status"] == "submitted"
        ] == ([(reviewer.username, own.judgment)] if own.status == "submitted" else [])
        assert {s["reviewer"] for s in body["sheets"]} <= {reviewer.username}
        assert body["gold"] is None

    # A claim not in the reviewer's queue: refused on both doors.
    other = claim_at("hm-1-a", 0)
    outsider_reviewer = UserFactory(username="rev_x", role="reviewer")
    opened.reviewers.add(outsider_reviewer)
    page = client_for(outsider_reviewer).get(reverse("audit:review-claim", args=[other.pk]))
    api = api_client(outsider_reviewer).get(_api(f"claims/{other.pk}"))
    assert (page.status_code, api.status_code) == (404, 404)


def test_sheets_are_those_the_adjudication_and_review_pages_show(
    opened, judged, lead, reviewer_a, client_for
):
    body = api_client(lead).get(_api(f"sets/{opened.pk}/sheets"), {"limit": 500}).json()
    listed = sorted((s["id"], s["claim"], s["reviewer"], s["judgment"]) for s in body["items"])
    shown = []
    for claim in {s["claim"] for s in body["items"]} | {c.pk for c in judged["claims"]}:
        page = client_for(lead).get(reverse("audit:adjudicate", args=[claim]))
        if page.status_code == 200 and "sheets" in page.context:
            shown += [
                (c["sheet"].pk, claim, c["sheet"].reviewer.username, c["sheet"].judgment)
                for c in page.context["sheets"]
            ]
    # The half-done claim's one submitted sheet too: the lead does not review this set.
    assert listed == sorted(shown)
    assert len(shown) == 9

    mine = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/sheets"), {"limit": 500}).json()
    for sheet in mine["items"]:
        page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[sheet["claim"]]))
        assert (sheet["id"], sheet["judgment"], sheet["status"]) == (
            page.context["sheet"].pk,
            page.context["sheet"].judgment,
            page.context["sheet"].status,
        )
    assert {s["reviewer"] for s in mine["items"]} == {"rev_a"} and len(mine["items"]) == 5


def test_gold_is_the_gold_the_adjudication_page_shows(opened, judged, lead, reviewer_a, client_for):
    response = api_client(lead).get(_api(f"sets/{opened.pk}/gold"))
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    shown = {}
    for claim in judged["claims"]:
        gold = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk])).context["gold"]
        if gold is not None:
            shown[claim.pk] = (gold.judgment, gold.source)
    assert {r["claim"]: (r["judgment"], r["source"]) for r in rows} == shown
    assert len(shown) == 2

    page = client_for(reviewer_a).get(reverse("audit:adjudication-queue", args=[opened.pk]))
    api = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/gold"))
    assert (page.status_code, api.status_code) == (403, 403)


# ------------------------------------------------------------------------- imports and jobs


def _native(answer_id: str = "p-1") -> bytes:
    from tests.formats.helpers import jsonl, native_line

    return jsonl(native_line())


def test_an_import_through_the_api_stores_what_the_upload_page_stores(lead, client_for):
    data = (FIXTURES / "demo" / "handmade.jsonl").read_bytes()
    page = client_for(lead).post(
        reverse("audit:import"),
        {
            "file": SimpleUploadedFile("handmade.jsonl", data),
            "new_set_name": "By page",
            "workspace": default_workspace().pk,
            "format": "auto",
        },
    )
    api = api_client(lead).post(
        _api("imports"),
        {"file": SimpleUploadedFile("handmade.jsonl", data), "new_set_name": "By API"},
    )

    assert page.status_code == 302 and api.status_code == 202, api.content
    page_job, api_job = Job.objects.order_by("pk")
    assert page.url == page_job.get_absolute_url() and api.json()["id"] == api_job.pk
    run_queued_jobs()
    by_page, by_api = AuditSet.objects.get(name="By page"), AuditSet.objects.get(name="By API")
    assert stored_import_rows(by_api) == stored_import_rows(by_page)
    assert len(stored_import_rows(by_page)) > 10
    page_job.refresh_from_db()
    api_job.refresh_from_db()
    ids = ("audit_set", "batch_id")
    assert page_job.status == api_job.status == "succeeded"
    assert {k: v for k, v in page_job.result.items() if k not in ids} == {
        k: v for k, v in api_job.result.items() if k not in ids
    }


@pytest.fixture
def jobs(lead):
    """An import that succeeded, one that failed naming its line, and one still queued."""
    done = queue_import(lead, _native(), set_name="Done")
    failed = queue_import(lead, b'{"question_id": 1}\n', set_name="Failed")
    run_queued_jobs()
    queued = queue_import(lead, _native(), set_name="Queued")
    return [done, failed, queued]


def test_jobs_are_the_job_list_pages_rows(jobs, lead, client_for):
    page = client_for(lead).get(reverse("audit:job-list"))
    body = api_client(lead).get(_api("jobs")).json()

    shown = sorted(
        (job.pk, job.status, progress.done, progress.total)
        for job, progress in page.context["rows"]
    )
    listed = sorted((j["id"], j["status"], j["done"], j["total"]) for j in body["items"])
    assert listed == shown
    assert [row[1] for row in listed] == ["succeeded", "failed", "queued"]
    for status in ("failed", "queued"):
        only = api_client(lead).get(_api("jobs"), {"status": status}).json()["items"]
        assert [j["id"] for j in only] == [row[0] for row in shown if row[1] == status]


def test_a_job_is_its_pages_status_and_progress(jobs, lead, reviewer_a, client_for):
    for job in jobs:
        page = client_for(lead).get(reverse("audit:job-detail", args=[job.pk]))
        body = api_client(lead).get(_api(f"jobs/{job.pk}")).json()
        shown, progress = page.context["job"], page.context["progress"]
        assert (body["status"], body["error"], body["result"], body["set"]) == (
            shown.status,
            shown.error,
            shown.result,
            shown.audit_set_id,
        )
        assert (body["done"], body["total"], body["percent"]) == (
            progress.done,
            progress.total,
            progress.percent,
        )
    assert "line 1" in api_client(lead).get(_api(f"jobs/{jobs[1].pk}")).json()["error"]

    page = client_for(reviewer_a).get(reverse("audit:job-detail", args=[jobs[0].pk]))
    api = api_client(reviewer_a).get(_api(f"jobs/{jobs[0].pk}"))
    assert (page.status_code, api.status_code) == (403, 403)


def _job_state(job: Job) -> tuple:
    job.refresh_from_db()
    return (job.status, job.total, job.attempts, job.error, job.finished_at is None)


def test_cancelling_through_the_api_cancels_as_the_page_does(lead, client_for):
    by_page = queue_import(lead, _native(), set_name="Page")
    by_api = queue_import(lead, _native(), set_name="API")

    page = client_for(lead).post(reverse("audit:job-cancel", args=[by_page.pk]))
    api = api_client(lead).post(_api(f"jobs/{by_api.pk}/cancel"))

    assert (page.status_code, api.status_code) == (302, 202)
    assert _job_state(by_api) == _job_state(by_page)
    assert by_page.status == api.json()["status"] == "cancelled"
    # Ended: the page says why it refuses, the API answers 409; nothing changes.
    again = client_for(lead).post(reverse("audit:job-cancel", args=[by_page.pk]), follow=True)
    refused = api_client(lead).post(_api(f"jobs/{by_api.pk}/cancel"))
    assert refused.status_code == 409
    assert [str(m) for m in again.context["messages"]][-1:] == [refused.json()["detail"]]
    assert _job_state(by_api) == _job_state(by_page)


def test_retrying_through_the_api_queues_as_the_page_does(lead, client_for):
    # Jobs whose worker went silent an hour ago, as a killed worker leaves them.
    by_page = queue_import(lead, _native(), set_name="Page")
    by_api = queue_import(lead, _native(), set_name="API")
    Job.objects.filter(pk__in=[by_page.pk, by_api.pk]).update(
        status="running", started_at=timezone.now() - timedelta(hours=1), worker="w1 pid 7"
    )

    page = client_for(lead).post(reverse("audit:job-retry", args=[by_page.pk]))
    api = api_client(lead).post(_api(f"jobs/{by_api.pk}/retry"))

    assert (page.status_code, api.status_code) == (302, 202), api.content
    assert _job_state(by_api) == _job_state(by_page)
    assert by_page.status == api.json()["status"] == "queued"
    # Queued: refused by both, with the same reason, and nothing changes.
    again = client_for(lead).post(reverse("audit:job-retry", args=[by_page.pk]), follow=True)
    refused = api_client(lead).post(_api(f"jobs/{by_api.pk}/retry"))
    assert refused.status_code == 409
    assert [str(m) for m in again.context["messages"]][-1:] == [refused.json()["detail"]]
    assert _job_state(by_api) == _job_state(by_page)
    assert [j.status for j in run_queued_jobs()] == ["succeeded", "succeeded"]
    assert _job_state(by_api) == _job_state(by_page)

    # A failed import keeps no upload: both refuse to run it again, saying so.
    failed = queue_import(lead, b'{"question_id": 1}\n', set_name="Bad")
    run_queued_jobs()
    page = client_for(lead).post(reverse("audit:job-retry", args=[failed.pk]), follow=True)
    api = api_client(lead).post(_api(f"jobs/{failed.pk}/retry"))
    assert api.status_code == 409
    assert [str(m) for m in page.context["messages"]][-1:] == [api.json()["detail"]]
    assert _job_state(failed)[0] == "failed"
