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
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit import services
from audit.api import api
from audit.api.base import plain
from audit.formats.catalogue import EXPORT_FORMATS
from audit.judgments import NOT_SUPPORTED, PARTIAL, SUPPORTED
from audit.models import (
    Assignment,
    AuditSet,
    ClaimCheck,
    Job,
    Judge,
    JudgeRun,
    Membership,
    RaterLabel,
    Webhook,
    Workspace,
)
from audit.services import judges as judge_services
from tests.conftest import (
    FIXTURES,
    api_client,
    import_file,
    queue_import,
    refund_set_with_gold,
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
from tests.formats.helpers import jsonl, native_line

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
    # suggestions from outside, and every source measured against gold
    "POST /sets/{set_id}/suggestions": (
        HERE,
        "test_suggestions_pushed_through_the_api_are_those_the_upload_page_stores",
    ),
    "POST /sets/{set_id}/suggestions/file": (
        HERE,
        "test_suggestions_pushed_through_the_api_are_those_the_upload_page_stores",
    ),
    "GET /sets/{set_id}/suggestion-sources": (
        HERE,
        "test_sources_and_suggestions_read_through_the_api_are_the_pages_and_the_exports",
    ),
    "GET /sets/{set_id}/suggestions": (
        HERE,
        "test_sources_and_suggestions_read_through_the_api_are_the_pages_and_the_exports",
    ),
    "DELETE /sets/{set_id}/suggestion-sources/{source_id}": (
        HERE,
        "test_a_source_deleted_through_the_api_goes_as_from_the_page_and_is_kept_alike_once_shown",
    ),
    "GET /sets/{set_id}/suggestions/comparison": (
        "tests/test_suggestion_report.py",
        "test_page_and_api_show_the_same_figures",
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
    # The lead reviews one agreed claim too: both doors show it "in review" until they submit.
    blind = judged["claims"][0]
    opened.reviewers.add(lead)
    Assignment.objects.create(claim=blind, reviewer=lead)
    system = opened.answers.order_by("-system").values_list("system", flat=True).first()
    label = ClaimCheck.objects.get(claim=judged["claims"][1]).label
    statuses = {}
    for query in ({}, {"status": "disagreement"}, {"system": system}, {"label": label}):
        page = client_for(lead).get(
            reverse("audit:set-claims", args=[opened.pk]), {**query, "per_page": 500}
        )
        body = api_client(lead).get(_api(f"sets/{opened.pk}/claims"), {**query, "limit": 500})
        shown = sorted(
            (r.record.pk, r.record.status) for r in page.context["table"].page.object_list
        )
        listed = sorted((c["id"], c["status"]) for c in body.json()["items"])
        assert listed == shown, query
        # Each filter keeps some claims and leaves out others.
        assert 0 < len(listed) < (len(statuses["{}"]) if query else len(listed) + 1), query
        statuses[json.dumps(query)] = dict(listed)
    everything = statuses["{}"]
    assert everything[blind.pk] == "in_review"
    assert len(set(everything.values())) >= 3
    assert set(statuses[json.dumps({"status": "disagreement"})].values()) == {"disagreement"}

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

    # A lead who reviews the claim too sees nothing of the other sheets nor the gold until
    # theirs is in: the adjudication page refuses, the API gives what their review page shows.
    blind = judged["claims"][0]
    opened.reviewers.add(lead)
    Assignment.objects.create(claim=blind, reviewer=lead)
    page = client_for(lead).get(reverse("audit:adjudicate", args=[blind.pk]))
    review = client_for(lead).get(reverse("audit:review-claim", args=[blind.pk]))
    body = api_client(lead).get(_api(f"claims/{blind.pk}")).json()
    assert page.status_code == 403 and "sheets" not in page.context
    assert [s["id"] for s in body["sheets"]] in ([], [review.context["sheet"].pk])
    assert {s["reviewer"] for s in body["sheets"]} <= {"lead"} and body["gold"] is None
    sheets = api_client(lead).get(_api(f"sets/{opened.pk}/sheets"), {"limit": 500}).json()
    assert {s["reviewer"] for s in sheets["items"] if s["claim"] == blind.pk} <= {"lead"}
    gold = b"".join(api_client(lead).get(_api(f"sets/{opened.pk}/gold")).streaming_content)
    assert blind.pk not in [json.loads(line)["claim"] for line in gold.splitlines()]

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


def _native() -> bytes:
    """One valid answer in the native format."""
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


# ----------------------------------------------------------------------------------- results

VERDICT_CLAIMS = [("hm-1-a", 0), ("hm-1-a", 1), ("hm-2-a", 0)]


def _verdicts(judgment: str = SUPPORTED) -> bytes:
    lines = [
        {"judge": "nli-v1", "answer_id": a, "claim_index": i, "judgment": judgment}
        for a, i in VERDICT_CLAIMS
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _labels(audit_set) -> list[tuple]:
    return sorted(
        RaterLabel.objects.filter(claim__answer__audit_set=audit_set).values_list(
            "rater__name", "rater__kind", "claim__answer__external_id", "claim__order", "judgment"
        )
    )


def test_verdicts_pushed_through_the_api_are_those_the_upload_page_stores(
    handmade, twin, lead, client_for
):
    page = client_for(lead).post(
        reverse("audit:verdicts-upload", args=[handmade.pk]),
        {"file": SimpleUploadedFile("judge.jsonl", _verdicts())},
    )
    api = api_client(lead).post(
        _api(f"sets/{twin.pk}/verdicts"), {"file": SimpleUploadedFile("judge.jsonl", _verdicts())}
    )

    assert (page.status_code, api.status_code) == (200, 200), api.content
    summary = page.context["summary"]
    assert api.json() == {
        "judges": list(summary.judges),
        "created": summary.created,
        "replaced": summary.replaced,
    }
    assert _labels(twin) == _labels(handmade) and len(_labels(twin)) == 3

    # A line naming no claim: both refuse it with the same words, and store nothing more.
    bad = _verdicts().replace(b'"claim_index": 1', b'"claim_index": 99')
    page = client_for(lead).post(
        reverse("audit:verdicts-upload", args=[handmade.pk]),
        {"file": SimpleUploadedFile("judge.jsonl", bad)},
    )
    api = api_client(lead).post(
        _api(f"sets/{twin.pk}/verdicts"), {"file": SimpleUploadedFile("judge.jsonl", bad)}
    )
    assert (page.status_code, api.status_code) == (400, 422)
    assert page.context["error"] == api.json()["detail"]
    assert "line 2" in api.json()["detail"]
    assert _labels(twin) == _labels(handmade) and len(_labels(twin)) == 3


def test_agreement_is_the_dashboards_figures(opened, judged, lead, reviewer_a, client_for):
    page = client_for(lead).get(reverse("audit:agreement", args=[opened.pk]))
    body = api_client(lead).get(_api(f"sets/{opened.pk}/agreement")).json()

    board = page.context["board"]
    assert (body["sheets"], body["claims"], body["gold"]) == (
        board.sheets,
        board.claims,
        board.gold,
    )
    assert (body["claims"], body["gold"]) == (5, 2)
    for name in ("full", "binary", "evidence_jaccard", "evidence_f1", "unsupported_f1"):
        assert body[name] == plain(getattr(board, name)), name
    assert [r["name"] for r in body["raters"]] == [r.name for r in board.raters]

    # One system's answers: the page's filter and the API's parameter agree.
    system = opened.answers.order_by("system").values_list("system", flat=True).first()
    page = client_for(lead).get(reverse("audit:agreement", args=[opened.pk]), {"system": system})
    body = api_client(lead).get(_api(f"sets/{opened.pk}/agreement"), {"system": system}).json()
    assert (body["system"], body["claims"]) == (system, page.context["board"].claims)
    assert body["full"] == plain(page.context["board"].full)

    page = client_for(reviewer_a).get(reverse("audit:agreement", args=[opened.pk]))
    api = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/agreement"))
    assert (page.status_code, api.status_code) == (403, 403)


@pytest.fixture
def refunds(lead):
    """The refund example with gold on its three claims, under a criterion one claim fails
    (its wrong citation)."""
    audit_set, claims = refund_set_with_gold(lead)
    services.set_settings_update(
        audit_set=audit_set,
        by=lead,
        changes={"criteria": [{"kind": "max_wrong_citations", "limit": 0}]},
        guidelines_note=None,
        criteria_reason=None,
    )
    return audit_set, claims


def test_the_report_is_the_report_pages_figures(refunds, lead, client_for):
    audit_set, _claims = refunds
    page = client_for(lead).get(reverse("audit:set-report", args=[audit_set.pk]))
    body = api_client(lead).get(_api(f"sets/{audit_set.pk}/report")).json()

    overview = page.context["overview"]
    assert [(s["system"], s["decision"]) for s in body["systems"]] == [
        (release.system, release.badge) for release in overview.systems
    ]
    assert [s["decision"] for s in body["systems"]] == ["fail"]
    assert [s["metrics"] for s in body["systems"]] == [
        plain(release.summary) for release in overview.systems
    ]
    assert body["overall"] == plain(overview.overall)
    assert body["criteria"] == [c.describe() for c in overview.criteria]
    assert body["criteria_error"] == overview.criteria_error


def test_the_decision_is_the_report_pages_and_names_its_failing_claims(
    refunds, lead, reviewer_a, client_for
):
    audit_set, claims = refunds
    system = "rag-v1"
    report = client_for(lead).get(reverse("audit:set-report", args=[audit_set.pk]))
    failing = client_for(lead).get(
        reverse("audit:set-report-claims", args=[audit_set.pk]),
        {"system": system, "criterion": 1},
    )
    body = api_client(lead).get(_api(f"sets/{audit_set.pk}/decision"), {"system": system}).json()

    (release,) = report.context["overview"].systems
    assert body["decision"] == release.badge == "fail"
    (criterion,) = body["criteria"]
    assert criterion["passed"] is failing.context["result"].passed is False
    assert [c["id"] for c in criterion["claims"]] == [c.pk for c in failing.context["rows"]]
    assert [c["id"] for c in criterion["claims"]] == [claims[2].pk]
    assert criterion["failing"] == len(failing.context["result"].failing_claim_ids)

    unknown = api_client(lead).get(_api(f"sets/{audit_set.pk}/decision"), {"system": "nope"})
    page = client_for(lead).get(
        reverse("audit:set-report-claims", args=[audit_set.pk]),
        {"system": "nope", "criterion": 1},
    )
    assert (page.status_code, unknown.status_code) == (404, 404)


def _streamed(response) -> bytes:
    return b"".join(response.streaming_content)


def test_every_export_is_the_download_pages_file_byte_for_byte(
    opened, judged, lead, reviewer_a, client_for
):
    for fmt in EXPORT_FORMATS:
        page = client_for(lead).get(reverse("audit:set-export", args=[opened.pk, fmt]))
        api = api_client(lead).get(_api(f"sets/{opened.pk}/exports/{fmt}"))
        assert (page.status_code, api.status_code) == (200, 200), fmt
        assert page["Content-Type"] == api["Content-Type"], fmt
        assert page["Content-Disposition"] == api["Content-Disposition"], fmt
        content = _streamed(page)
        assert _streamed(api) == content, fmt
        assert len(content) > 100, fmt

    page = client_for(reviewer_a).get(reverse("audit:set-export", args=[opened.pk, "jsonl"]))
    api = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/exports/jsonl"))
    assert (page.status_code, api.status_code) == (403, 403)


# -------------------------------------------------------------------------------------- sets


def test_me_is_the_token_the_tokens_page_made(opened, lead, client_for):
    page = client_for(lead).post(
        reverse("audit:token-list"),
        {"name": "CI", "scope": "read", "workspace": "", "audit_set": opened.pk, "expires": ""},
    )
    secret = page.context["created"]
    assert secret

    body = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(_api("me")).json()

    (token,) = page.context["tokens"]
    assert body == {
        "username": "lead",
        "lead": True,
        "scope": token.scope,
        "token": token.name,
        "workspace": token.workspace.slug if token.workspace_id else None,
        "set": token.audit_set_id,
    }
    assert (body["scope"], body["set"]) == ("read", opened.pk)
    # Revoked on the page: the API no longer knows it.
    client_for(lead).post(reverse("audit:token-revoke", args=[token.pk]))
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(_api("me")).status_code == 401


def test_sets_are_the_set_list_pages_rows(opened, lead, reviewer_a, outsider, client_for):
    AuditSetFactory(name="Not reviewed by A")
    AuditSet.objects.create(workspace=Workspace.objects.get(slug="other"), name="Elsewhere")
    seen = {}
    for user in (lead, reviewer_a, outsider):
        page = client_for(user).get(reverse("audit:set-list"))
        body = api_client(user).get(_api("sets")).json()
        shown = sorted((row.record.pk, row.record.name) for row in page.context["table"].rows)
        assert sorted((s["id"], s["name"]) for s in body) == shown, user
        seen[user.username] = [name for _, name in shown]
    assert seen == {
        "lead": ["Calibration", "Not reviewed by A"],
        "rev_a": ["Calibration"],
        "outsider": ["Elsewhere"],
    }


def test_a_set_is_the_set_page_and_refused_where_the_page_is(
    opened, lead, reviewer_a, outsider, client_for
):
    for user in (lead, reviewer_a):
        page = client_for(user).get(reverse("audit:set-detail", args=[opened.pk]))
        body = api_client(user).get(_api(f"sets/{opened.pk}")).json()
        shown = page.context["audit_set"]
        assert body["name"] == shown.name == "Calibration"
        assert (body["id"], body["description"], body["guidelines"]) == (
            shown.pk,
            shown.description,
            shown.guidelines,
        )
    page = client_for(outsider).get(reverse("audit:set-detail", args=[opened.pk]))
    api = api_client(outsider).get(_api(f"sets/{opened.pk}"))
    assert (page.status_code, api.status_code) == (404, 404)


def test_settings_are_the_values_the_settings_pages_hold(opened, lead, reviewer_a, client_for):
    saved = client_for(lead).post(
        reverse("audit:adjudication-settings", args=[opened.pk]),
        {"auto_gold": "", "evidence_jaccard_threshold": 0.7, "anonymous_adjudication": "on"},
    )
    assert saved.status_code == 302

    body = api_client(lead).get(_api(f"sets/{opened.pk}/settings")).json()

    form = client_for(lead).get(reverse("audit:adjudication-settings", args=[opened.pk]))
    held = form.context["form"].initial
    assert (
        (body["auto_gold"], body["evidence_jaccard_threshold"], body["anonymous_adjudication"])
        == (
            held["auto_gold"],
            held["evidence_jaccard_threshold"],
            held["anonymous_adjudication"],
        )
        == (False, 0.7, True)
    )
    edit = client_for(lead).get(reverse("audit:set-edit", args=[opened.pk])).context["form"]
    assert (body["name"], body["description"], body["guidelines"]) == (
        edit.initial["name"],
        edit.initial["description"],
        edit.initial["guidelines"],
    )
    opens = client_for(lead).get(reverse("audit:review-open", args=[opened.pk])).context["form"]
    assert (body["overlap"], body["allow_reviewer_split"]) == (
        opens.initial["overlap"],
        opens.initial["allow_reviewer_split"],
    )

    page = client_for(reviewer_a).get(reverse("audit:set-edit", args=[opened.pk]))
    api = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/settings"))
    assert (page.status_code, api.status_code) == (403, 403)


# ---------------------------------------------------------------------------------- webhooks

HOOK_URL = "http://127.0.0.1:9/hook"
EVENTS = ["set.reviewed", "claim.adjudicated"]


def _hooks(**owner) -> list[tuple]:
    return [
        (h.url, sorted(h.events), len(h.secret), h.audit_set_id, h.workspace_id)
        for h in Webhook.objects.filter(**owner).order_by("pk")
    ]


@pytest.mark.usefixtures("egress_loopback")
def test_a_sets_hooks_are_its_hooks_pages(opened, lead, reviewer_a, client_for):
    first = services.webhook_create(url=HOOK_URL, events=EVENTS, user=lead, audit_set=opened)
    second = services.webhook_create(
        url=HOOK_URL + "2", events=EVENTS[:1], user=lead, audit_set=opened
    )
    services.webhook_create(url=HOOK_URL, events=EVENTS, user=lead, workspace=opened.workspace)

    page = client_for(lead).get(reverse("audit:set-webhooks", args=[opened.pk]))
    body = api_client(lead).get(_api(f"sets/{opened.pk}/webhooks")).json()

    assert [(h["id"], h["url"], h["events"]) for h in body] == [
        (hook.pk, hook.url, hook.events) for hook, _log in page.context["hooks"]
    ]
    assert [h["id"] for h in body] == [first.pk, second.pk]
    assert all(h.secret not in page.content.decode() for h in Webhook.objects.all())

    page = client_for(reviewer_a).get(reverse("audit:set-webhooks", args=[opened.pk]))
    api = api_client(reviewer_a).get(_api(f"sets/{opened.pk}/webhooks"))
    assert (page.status_code, api.status_code) == (403, 403)


@pytest.mark.usefixtures("egress_loopback")
def test_a_set_hook_added_through_the_api_is_the_one_the_page_adds(opened, twin, lead, client_for):
    page = client_for(lead).post(
        reverse("audit:set-webhooks", args=[opened.pk]), {"url": HOOK_URL, "events": EVENTS}
    )
    api = api_client(lead).post(
        _api(f"sets/{twin.pk}/webhooks"),
        {"url": HOOK_URL, "events": EVENTS},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (200, 201), api.content
    by_page, by_api = _hooks(audit_set=opened), _hooks(audit_set=twin)
    assert (
        [row[:3] for row in by_api]
        == [row[:3] for row in by_page]
        == [(HOOK_URL, sorted(EVENTS), 64)]
    )
    # Each door shows its new hook's secret once.
    assert page.context["created"].secret in page.content.decode()
    assert api.json()["secret"] == Webhook.objects.get(audit_set=twin).secret

    # A URL the rules refuse: both doors say why, and add nothing.
    page = client_for(lead).post(
        reverse("audit:set-webhooks", args=[opened.pk]), {"url": "ftp://x.org/h", "events": EVENTS}
    )
    api = api_client(lead).post(
        _api(f"sets/{twin.pk}/webhooks"),
        {"url": "ftp://x.org/h", "events": EVENTS},
        content_type="application/json",
    )
    assert api.status_code == 422
    (error,) = page.context["form"].errors["url"]
    assert error in api.json()["detail"]
    assert len(_hooks(audit_set=opened)) == len(_hooks(audit_set=twin)) == 1


@pytest.mark.usefixtures("egress_loopback")
def test_a_workspaces_hooks_are_its_hooks_pages(opened, lead, reviewer_a, client_for):
    workspace = opened.workspace
    services.webhook_create(url=HOOK_URL, events=EVENTS, user=lead, workspace=workspace)
    services.webhook_create(url=HOOK_URL, events=EVENTS, user=lead, audit_set=opened)

    page = client_for(lead).get(reverse("audit:workspace-webhooks", args=[workspace.slug]))
    body = api_client(lead).get(_api(f"workspaces/{workspace.slug}/webhooks")).json()

    assert [(h["id"], h["url"], h["events"], h["workspace"], h["set"]) for h in body] == [
        (hook.pk, hook.url, hook.events, workspace.slug, None)
        for hook, _log in page.context["hooks"]
    ]
    assert len(body) == 1

    page = client_for(reviewer_a).get(reverse("audit:workspace-webhooks", args=[workspace.slug]))
    api = api_client(reviewer_a).get(_api(f"workspaces/{workspace.slug}/webhooks"))
    assert (page.status_code, api.status_code) == (403, 403)


@pytest.mark.usefixtures("egress_loopback")
def test_a_workspace_hook_added_through_the_api_is_the_one_the_page_adds(lead, client_for):
    other = Workspace.objects.create(name="Twin workspace", slug="twin")
    Membership.objects.create(workspace=other, user=lead, role="lead")
    home = default_workspace()
    page = client_for(lead).post(
        reverse("audit:workspace-webhooks", args=[home.slug]), {"url": HOOK_URL, "events": EVENTS}
    )
    api = api_client(lead).post(
        _api(f"workspaces/{other.slug}/webhooks"),
        {"url": HOOK_URL, "events": EVENTS},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (200, 201), api.content
    by_page, by_api = _hooks(workspace=home), _hooks(workspace=other)
    assert (
        [row[:4] for row in by_api]
        == [row[:4] for row in by_page]
        == [(HOOK_URL, sorted(EVENTS), 64, None)]
    )
    assert page.context["created"].secret in page.content.decode()
    assert api.json()["secret"] == Webhook.objects.get(workspace=other).secret

    page = client_for(lead).post(
        reverse("audit:workspace-webhooks", args=[home.slug]), {"url": HOOK_URL, "events": ["nope"]}
    )
    api = api_client(lead).post(
        _api(f"workspaces/{other.slug}/webhooks"),
        {"url": HOOK_URL, "events": ["nope"]},
        content_type="application/json",
    )
    assert page.context["form"].errors["events"] and api.status_code == 422
    assert len(_hooks(workspace=home)) == len(_hooks(workspace=other)) == 1


@pytest.mark.usefixtures("egress_loopback")
def test_removing_a_hook_through_the_api_removes_as_the_page_does(
    opened, lead, reviewer_a, client_for
):
    by_page = services.webhook_create(url=HOOK_URL, events=EVENTS, user=lead, audit_set=opened)
    by_api = services.webhook_create(
        url=HOOK_URL, events=EVENTS, user=lead, workspace=opened.workspace
    )
    kept = services.webhook_create(url=HOOK_URL + "k", events=EVENTS, user=lead, audit_set=opened)

    refused_page = client_for(reviewer_a).post(reverse("audit:webhook-delete", args=[by_page.pk]))
    refused_api = api_client(reviewer_a).delete(_api(f"webhooks/{by_api.pk}"))
    assert (refused_page.status_code, refused_api.status_code) == (403, 403)
    assert Webhook.objects.count() == 3

    page = client_for(lead).post(reverse("audit:webhook-delete", args=[by_page.pk]))
    api = api_client(lead).delete(_api(f"webhooks/{by_api.pk}"))

    assert (page.status_code, api.status_code) == (302, 204)
    assert list(Webhook.objects.values_list("pk", flat=True)) == [kept.pk]
    again_page = client_for(lead).post(reverse("audit:webhook-delete", args=[by_page.pk]))
    again_api = api_client(lead).delete(_api(f"webhooks/{by_api.pk}"))
    assert (again_page.status_code, again_api.status_code) == (404, 404)


# ------------------------------------------------------------------------------------ judges


def _judge(audit_set, lead, base_url: str, name: str) -> Judge:
    fields = {
        "name": name,
        "base_url": base_url,
        "model": "fake-1",
        "api_key_env": "",
        "temperature": 0.0,
        "max_concurrency": 2,
        "timeout_seconds": 5.0,
        "min_kappa": 0.2,
        "min_gold": 3,
    }
    return judge_services.judge_create(audit_set=audit_set, fields=fields, user=lead)


@pytest.fixture
def judges(refunds, lead, fake_llm, egress_loopback):
    """Two judges of the refund set, the second with a second version."""
    audit_set, _claims = refunds
    first = _judge(audit_set, lead, fake_llm.base_url, "first")
    second = _judge(audit_set, lead, fake_llm.base_url, "second")
    _second_version(second, lead)
    return audit_set, [first, second]


def _second_version(judge: Judge, lead) -> None:
    template = judge_services.judge_current_version(judge).template
    judge_services.judge_update(
        judge=judge, fields={"model": "fake-2"}, template=template, user=lead
    )


def test_judges_are_the_judge_list_pages(judges, lead, reviewer_a, client_for):
    audit_set, made = judges
    page = client_for(lead).get(reverse("audit:judge-list", args=[audit_set.pk]))
    body = api_client(lead).get(_api(f"sets/{audit_set.pk}/judges")).json()

    assert [(j["id"], j["name"], j["model"], len(j["versions"])) for j in body] == [
        (judge.pk, judge.name, judge.model, len(judge.versions.all()))
        for judge in page.context["judges"]
    ]
    assert [(j["name"], j["current_version"]) for j in body] == [("first", 1), ("second", 2)]

    audit_set.reviewers.add(reviewer_a)
    page = client_for(reviewer_a).get(reverse("audit:judge-list", args=[audit_set.pk]))
    api = api_client(reviewer_a).get(_api(f"sets/{audit_set.pk}/judges"))
    assert (page.status_code, api.status_code) == (403, 403)


def test_a_judge_is_its_detail_pages(judges, lead, client_for):
    _audit_set, made = judges
    for judge in made:
        page = client_for(lead).get(reverse("audit:judge-detail", args=[judge.pk]))
        body = api_client(lead).get(_api(f"judges/{judge.pk}")).json()
        shown, current = page.context["judge"], page.context["current"]
        assert (body["current_version"], body["template"]) == (current.number, current.template)
        assert [(v["number"], v["model"], v["accepted"]) for v in body["versions"]] == sorted(
            (v.number, v.model, hasattr(v, "acceptance")) for v in page.context["versions"]
        )
        for field in ("name", "base_url", "model", "min_kappa", "min_gold", "max_concurrency"):
            assert body[field] == getattr(shown, field), field
        assert body["refusal"] == page.context["refusal"]
    assert api_client(lead).get(_api(f"judges/{made[1].pk}")).json()["model"] == "fake-2"


def _run_row(run: JudgeRun) -> tuple:
    return (run.version.number, run.subset, run.system, sorted(run.claim_ids), run.job.kind)


def test_a_run_started_through_the_api_is_the_run_the_page_starts(
    judges, lead, client_for, settings
):
    _audit_set, (by_page, by_api) = judges
    _second_version(by_page, lead)

    def start(subset: str = "all", system: str = ""):
        page = client_for(lead).post(
            reverse("audit:judge-run", args=[by_page.pk]),
            {"subset": subset, "system": system},
            follow=True,
        )
        api = api_client(lead).post(
            _api(f"judges/{by_api.pk}/runs"),
            {"subset": subset, "system": system},
            content_type="application/json",
        )
        return page, api

    # Under the operator's floor of gold claims: both refuse, with the same reason.
    settings.JUDGE_MIN_GOLD_FLOOR = 30
    page, api = start()
    assert api.status_code == 409
    assert [str(m) for m in page.context["messages"]][-1:] == [api.json()["detail"]]
    assert not JudgeRun.objects.exists()

    settings.JUDGE_MIN_GOLD_FLOOR = 1
    page, api = start()

    assert (page.status_code, api.status_code) == (200, 202), api.content
    page_run = JudgeRun.objects.get(version__judge=by_page)
    api_run = JudgeRun.objects.get(version__judge=by_api)
    assert _run_row(api_run) == _run_row(page_run)
    assert len(page_run.claim_ids) == 3 and api.json()["claims"] == 3
    assert (api_run.job.status, page_run.job.status) == ("queued", "queued")

    # A subset of one system, but none named: both refuse it and start nothing.
    page, api = start("system")
    assert (page.status_code, api.status_code) == (400, 422)
    assert page.context["run_form"].errors["system"] and "body.system" in api.json()["detail"]
    assert JudgeRun.objects.count() == 2


# ------------------------------------------------------------------------------ suggestions

SUGGESTED = [
    {
        "claim": "hm-1-a claim 1",
        "judgment": "partially_supported",
        "judgment_score": 0.7,
        "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.8}],
        "unsupported": [{"start": 0, "end": 9, "score": 0.6}],
        "wrong_citation": {"passage": 2, "score": 0.3},
    },
    {"claim": "hm-2-a claim 1", "judgment": "supported"},
]


def _stored(source_name: str) -> list[tuple]:
    from audit.models import Suggestion

    rows = Suggestion.objects.filter(source__name=source_name).order_by("claim_id")
    return [
        (
            s.claim_id,
            s.judgment,
            s.judgment_score,
            s.evidence,
            s.unsupported,
            s.wrong_citation_passage,
            s.wrong_citation_score,
        )
        for s in rows
    ]


def test_suggestions_pushed_through_the_api_are_those_the_upload_page_stores(
    handmade, lead, client_for
):
    data = "".join(json.dumps(record) + "\n" for record in SUGGESTED).encode()
    page = client_for(lead).post(
        reverse("audit:suggestions-upload", args=[handmade.pk]),
        {"name": "page", "version": "1", "file": SimpleUploadedFile("s.jsonl", data)},
    )
    api = api_client(lead)
    body = api.post(
        f"{V1}/sets/{handmade.pk}/suggestions",
        {"name": "body", "version": "1", "suggestions": SUGGESTED},
        content_type="application/json",
    )
    file = api.post(
        f"{V1}/sets/{handmade.pk}/suggestions/file",
        {"name": "file", "version": "1", "file": SimpleUploadedFile("s.jsonl", data)},
    )

    assert (page.status_code, body.status_code, file.status_code) == (200, 200, 200)
    assert len(_stored("page")) == 2
    assert _stored("page") == _stored("body") == _stored("file")
    # A refused record is refused by each door, naming the same place, and stores nothing.
    bad = [{"claim": "hm-1-a claim 1", "judgment": "maybe"}]
    page = client_for(lead).post(
        reverse("audit:suggestions-upload", args=[handmade.pk]),
        {
            "name": "bad",
            "version": "1",
            "file": SimpleUploadedFile("s.jsonl", (json.dumps(bad[0]) + "\n").encode()),
        },
    )
    body = api.post(
        f"{V1}/sets/{handmade.pk}/suggestions",
        {"name": "bad", "version": "1", "suggestions": bad},
        content_type="application/json",
    )
    assert "judgment" in page.content.decode() and "line 1" in page.content.decode()
    assert body.status_code == 422
    assert [e["field"].rsplit(".", 1)[-1] for e in body.json()["errors"]] == ["judgment"]
    assert _stored("bad") == []


def test_sources_and_suggestions_read_through_the_api_are_the_pages_and_the_exports(
    handmade, lead, client_for
):
    from audit.services.exports import export_stream

    api = api_client(lead)
    api.post(
        f"{V1}/sets/{handmade.pk}/suggestions",
        {"name": "nli <i>", "version": "2", "suggestions": SUGGESTED},
        content_type="application/json",
    )
    sources = api.get(f"{V1}/sets/{handmade.pk}/suggestion-sources").json()
    page = client_for(lead).get(reverse("audit:suggestions-upload", args=[handmade.pk]))
    listed = page.content.decode()
    pushed = [s for s in sources if s["kind"] == "source"]
    assert [(s["name"], s["version"]) for s in pushed] == [("nli <i>", "2")]
    assert "nli &lt;i&gt;" in listed and "nli <i>" not in listed
    # The suggestions the API lists are those the JSON Lines export carries for the source.
    key = pushed[0]["key"]
    items = api.get(f"{V1}/sets/{handmade.pk}/suggestions", {"source": key}).json()["items"]
    exported = {}
    for line in "".join(export_stream(audit_set=handmade, fmt="jsonl", viewer=lead)).splitlines():
        record = json.loads(line)
        if record["record"] == "claim":
            for suggestion in record["suggestions"]:
                if suggestion["source"] == key:
                    exported[record["claim"]["db_id"]] = suggestion
    assert len(items) == 2
    assert {
        item["claim"]: {k: v for k, v in item.items() if k not in ("claim", "claim_name")}
        for item in items
    } == exported


def test_a_source_deleted_through_the_api_goes_as_from_the_page_and_is_kept_alike_once_shown(
    opened, lead, reviewer_a, client_for
):
    import html

    handmade = opened

    from audit.models import AuditSheet, Suggestion, SuggestionSettingChange, SuggestionSource
    from audit.services.suggestion_settings import set_suggestion_settings

    api = api_client(lead)
    for name in ("page", "api", "shown"):
        pushed = api.post(
            f"{V1}/sets/{handmade.pk}/suggestions",
            {"name": name, "version": "1", "suggestions": SUGGESTED},
            content_type="application/json",
        )
        assert pushed.status_code == 200, pushed.content
    by_name = {s.name: s for s in SuggestionSource.objects.all()}
    # The set pre-highlights with the source the page deletes: it goes back to the matcher.
    set_suggestion_settings(
        audit_set=handmade,
        user=lead,
        source_key=f"source:{by_name['page'].pk}",
        show_judgment=True,
        withhold_share=0.0,
    )
    upload = reverse("audit:suggestions-upload", args=[handmade.pk])

    page = client_for(lead).post(upload, {"delete": by_name["page"].pk})
    gone = api.delete(f"{V1}/sets/{handmade.pk}/suggestion-sources/{by_name['api'].pk}")

    assert (page.status_code, gone.status_code) == (302, 204)
    assert set(SuggestionSource.objects.values_list("name", flat=True)) == {"shown"}
    assert set(Suggestion.objects.values_list("source__name", flat=True)) == {"shown"}
    handmade.refresh_from_db()
    assert handmade.suggestion_source == "matcher"
    change = SuggestionSettingChange.objects.first()  # the newest
    assert (change.before["suggestion_source"], change.after["suggestion_source"], change.by) == (
        f"source:{by_name['page'].pk}",
        "matcher",
        lead,
    )

    # Once a reviewer was shown a source, both doors keep it, saying why in the same words.
    shown = by_name["shown"]
    sheet = submit_sheet(reviewer_a, claim_at("hm-1-a", 0), NOT_SUPPORTED)
    AuditSheet.objects.filter(pk=sheet.pk).update(suggestion_source_shown=f"source:{shown.pk}")
    page = client_for(lead).post(upload, {"delete": shown.pk}, follow=True)
    kept = api.delete(f"{V1}/sets/{handmade.pk}/suggestion-sources/{shown.pk}")

    assert kept.status_code == 409
    detail = kept.json()["detail"]
    assert detail.startswith("Reviewers were shown shown 1 on 1 sheet: it is kept")
    assert detail in html.unescape(page.content.decode())
    assert SuggestionSource.objects.filter(pk=shown.pk).exists()
    assert Suggestion.objects.filter(source=shown).count() == 2
    listed = client_for(lead).get(upload).context["sources"]
    assert [(s.name, s.shown) for s in listed] == [("shown", 1)]
    assert f'name="delete" value="{shown.pk}"' not in page.content.decode()
    # Not a pushed source of this set, or not a lead: refused by both doors alike.
    other = AuditSetFactory(name="Other")
    assert api.delete(f"{V1}/sets/{other.pk}/suggestion-sources/{shown.pk}").status_code == 404
    assert (
        client_for(lead)
        .post(reverse("audit:suggestions-upload", args=[other.pk]), {"delete": shown.pk})
        .status_code
        == 404
    )
    assert (
        api_client(reviewer_a)
        .delete(f"{V1}/sets/{handmade.pk}/suggestion-sources/{shown.pk}")
        .status_code
        == 403
    )
    assert client_for(reviewer_a).post(upload, {"delete": shown.pk}).status_code in (403, 404)
    assert SuggestionSource.objects.filter(pk=shown.pk).exists()
