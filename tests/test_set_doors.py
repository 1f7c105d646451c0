"""A set's creation and settings through both doors, the pages and the API: each use case is
one service, so both refuse the same inputs and write the same rows (guideline versions with
author and note, criteria versions with their reason, re-comparing by a job for a big set)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from audit import services
from audit.models import AuditSet, CriteriaChange, GuidelineVersion, Job, Workspace
from tests.conftest import api_client, queue_import, run_queued_jobs
from tests.factories import claim_at, default_workspace, submit_sheet
from tests.formats.helpers import jsonl, native_line

pytestmark = pytest.mark.django_db

NOTE = "Define unclear."
REASON = "Wrong citations are counted by the matcher now; three are tolerated."
WEAKER = [{"kind": "max_wrong_citations", "limit": 3}]


def _patch(client, audit_set, body: dict):
    return client.patch(
        f"/api/v1/sets/{audit_set.pk}/settings", body, content_type="application/json"
    )


def _versions(audit_set) -> list[tuple]:
    return [
        (v.number, v.text, v.note, v.by)
        for v in GuidelineVersion.objects.filter(audit_set=audit_set).order_by("number")
    ]


def _changes(audit_set) -> list[tuple]:
    return [
        (c.version, c.by, c.before, c.after, c.after_lock, c.reason)
        for c in CriteriaChange.objects.filter(audit_set=audit_set).order_by("version")
    ]


@pytest.fixture
def twin(opened):
    """A second set like `opened`, so a page edit and an API edit can be compared."""
    return AuditSet.objects.create(
        workspace=opened.workspace, name="Twin", guidelines=opened.guidelines
    )


# --------------------------------------------------------------------------- guidelines


def test_a_guideline_edit_through_the_api_is_a_version_with_author_and_note_as_on_the_page(
    client_for, opened, twin, lead
):
    new_text = opened.guidelines + "\n- *Unclear*: too vague to check."
    page = client_for(lead).post(
        reverse("audit:set-edit", args=[opened.pk]),
        {
            "name": opened.name,
            "description": opened.description,
            "guidelines": new_text,
            "change_note": NOTE,
        },
    )
    api = _patch(api_client(lead), twin, {"guidelines": new_text, "guidelines_note": NOTE})

    assert (page.status_code, api.status_code) == (302, 200), api.content
    assert api.json()["guidelines"] == new_text
    expected = [
        (1, opened.guidelines, "First version.", None),
        (2, new_text, NOTE, lead),
    ]
    assert _versions(opened) == expected
    assert _versions(twin) == expected


def test_an_api_guideline_edit_without_a_note_is_refused_as_on_the_page(opened, lead):
    response = _patch(api_client(lead), opened, {"guidelines": "Other rules."})

    assert response.status_code == 422
    assert response.json()["detail"] == (
        "Invalid request: body.guidelines_note: "
        "Say what changed in the guidelines, in the change note."
    )
    opened.refresh_from_db()
    assert opened.guidelines != "Other rules."
    assert _versions(opened) == []


def test_a_note_or_a_reason_without_what_it_explains_is_refused(opened, lead):
    client = api_client(lead)

    reason = _patch(client, opened, {"criteria_reason": REASON})
    note = _patch(client, opened, {"name": "Renamed", "guidelines_note": NOTE})

    assert (reason.status_code, note.status_code) == (422, 422)
    assert reason.json()["detail"] == (
        "Invalid request: body.criteria_reason: a reason is given with criteria only."
    )
    assert note.json()["detail"] == (
        "Invalid request: body.guidelines_note: a note is given with guidelines only."
    )
    opened.refresh_from_db()
    assert opened.name == "Calibration"


def test_a_patch_with_one_bad_field_writes_nothing(opened, lead):
    before = (opened.name, opened.guidelines, opened.auto_gold)

    response = _patch(
        api_client(lead),
        opened,
        {
            "name": "Renamed",
            "guidelines": "Other rules.",
            "guidelines_note": NOTE,
            "auto_gold": not opened.auto_gold,
            "criteria": [{"kind": "no_such_rule"}],
        },
    )

    assert response.status_code == 422
    opened.refresh_from_db()
    assert (opened.name, opened.guidelines, opened.auto_gold) == before
    assert _versions(opened) == []
    assert _changes(opened) == []


# ----------------------------------------------------------------------------- criteria


@pytest.fixture
def locked(opened, lead, reviewer_a):
    """Criteria version 1 written before review; then review started (the lock)."""
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    submit_sheet(reviewer_a, claim_at("hm-2-a", 0), "contradicted")
    return opened


def test_locked_criteria_through_the_api_need_a_reason_and_are_recorded_as_on_the_page(
    client_for, locked, lead
):
    page_client = client_for(lead)
    url = reverse("audit:set-criteria", args=[locked.pk])
    page_refused = page_client.post(
        url, {"max_wrong_citations": "on", "max_wrong_citations_limit": 3}
    )
    api_refused = _patch(api_client(lead), locked, {"criteria": WEAKER})

    assert (page_refused.status_code, api_refused.status_code) == (200, 422)
    assert "body.criteria_reason: Review started" in api_refused.json()["detail"]
    before = [(1, lead, [], [{"kind": "no_contradicted", "topics": []}], False, "")]
    assert _changes(locked) == before

    page = page_client.post(
        url, {"max_wrong_citations": "on", "max_wrong_citations_limit": 3, "reason": REASON}
    )
    page_rows = _changes(locked)
    # Back to version 1's criteria, then the same change through the API.
    services.criteria_update(
        audit_set=locked, criteria=[{"kind": "no_contradicted"}], by=lead, reason="back"
    )
    api = _patch(api_client(lead), locked, {"criteria": WEAKER, "criteria_reason": REASON})

    assert (page.status_code, api.status_code) == (302, 200), api.content
    rows = _changes(locked)
    assert (
        rows[1]
        == page_rows[1]
        == (
            2,
            lead,
            [{"kind": "no_contradicted", "topics": []}],
            [{"kind": "max_wrong_citations", "limit": 3}],
            True,
            REASON,
        )
    )
    assert rows[3][1:] == rows[1][1:]
    assert rows[3][0] == 4


# ---------------------------------------------------------------------------- re-compare


def test_the_apis_recompare_of_a_big_set_is_a_job_and_of_a_small_one_direct(opened, lead, settings):
    client = api_client(lead)
    settings.WEB_DIRECT_MAX_ANSWERS = 1

    queued = _patch(client, opened, {"auto_gold": False, "evidence_jaccard_threshold": 0.4})

    assert queued.status_code == 202, queued.content
    job = Job.objects.get()
    assert queued.json()["id"] == job.pk
    assert (queued.json()["kind"], queued.json()["status"]) == ("recompare", "queued")
    assert client.get(f"/api/v1/jobs/{job.pk}").json()["id"] == job.pk
    opened.refresh_from_db()
    assert (opened.auto_gold, opened.evidence_jaccard_threshold) == (True, 0.5)
    run_queued_jobs()
    opened.refresh_from_db()
    assert (opened.auto_gold, opened.evidence_jaccard_threshold) == (False, 0.4)

    settings.WEB_DIRECT_MAX_ANSWERS = 2000
    direct = _patch(client, opened, {"evidence_jaccard_threshold": 0.3})

    assert direct.status_code == 200
    assert direct.json()["evidence_jaccard_threshold"] == 0.3
    assert Job.objects.count() == 1


def test_the_pages_recompare_of_a_big_set_is_a_job_and_of_a_small_one_direct(
    client_for, opened, lead, settings
):
    client = client_for(lead)
    url = reverse("audit:adjudication-settings", args=[opened.pk])
    settings.WEB_DIRECT_MAX_ANSWERS = 1

    queued = client.post(url, {"evidence_jaccard_threshold": 0.4})

    job = Job.objects.get()
    assert (queued.status_code, queued.url, job.kind) == (302, job.get_absolute_url(), "recompare")
    settings.WEB_DIRECT_MAX_ANSWERS = 2000
    direct = client.post(url, {"evidence_jaccard_threshold": 0.3})
    assert direct.status_code == 302
    assert Job.objects.count() == 1
    opened.refresh_from_db()
    assert opened.evidence_jaccard_threshold == 0.3


# ---------------------------------------------------------------------------- creation


def _page_create(client, **fields):
    data = {"workspace": default_workspace().pk, "name": "", "description": "", "guidelines": ""}
    data.update(fields)
    return client.post(reverse("audit:set-create"), data)


def _api_create(client, **fields):
    return client.post("/api/v1/sets", fields, content_type="application/json")


def test_both_doors_create_the_same_rows(client_for, lead):
    page = _page_create(client_for(lead), name=" By page ", description="d", guidelines="Rules.")
    api = _api_create(api_client(lead), name=" By API ", description="d", guidelines="Rules.")

    assert (page.status_code, api.status_code) == (302, 201)
    by_page = AuditSet.objects.get(name="By page")
    by_api = AuditSet.objects.get(name="By API")

    def row(audit_set):
        return (
            audit_set.workspace,
            audit_set.description,
            audit_set.guidelines,
            audit_set.created_by,
            audit_set.is_training,
            audit_set.criteria,
            _versions(audit_set),
        )

    assert (
        row(by_page)
        == row(by_api)
        == (
            default_workspace(),
            "d",
            "Rules.",
            lead,
            False,
            [],
            [(1, "Rules.", "First version.", None)],
        )
    )


@pytest.mark.parametrize(
    ("fields", "page_error", "api_status"),
    [
        ({"name": "   "}, "This field is required.", 422),
        ({"name": "Calibration"}, "This workspace already has a set with this name.", 409),
        ({"name": "x" * 201}, "Ensure this value has at most 200 characters", 422),
        ({"name": "Long", "description": "d" * 10001}, "at most 10000 characters", 422),
        ({"name": "Long", "guidelines": "g" * 100001}, "at most 100000 characters", 422),
    ],
)
def test_both_doors_refuse_the_same_bad_inputs(
    client_for, lead, audit_set, fields, page_error, api_status
):
    count = AuditSet.objects.count()

    page = _page_create(client_for(lead), **fields)
    api = _api_create(api_client(lead), **fields)

    assert page.status_code == 200
    assert page_error in page.content.decode()
    assert api.status_code == api_status
    assert AuditSet.objects.count() == count


def test_neither_door_creates_a_set_in_a_workspace_one_does_not_lead(client_for, lead):
    other = Workspace.objects.create(slug="other", name="Other")

    page = _page_create(client_for(lead), workspace=other.pk, name="Elsewhere")
    api = _api_create(api_client(lead), workspace="other", name="Elsewhere")

    assert (page.status_code, api.status_code) == (200, 404)
    assert not AuditSet.objects.filter(name="Elsewhere").exists()
    with pytest.raises(PermissionDenied):
        services.set_create(workspace=other, name="Elsewhere", by=lead)


def test_a_set_made_by_an_import_is_made_as_the_other_doors_make_one(client_for, lead):
    page = _page_create(client_for(lead), name="By page")
    job = queue_import(lead, jsonl(native_line()), set_name=" By import ")
    run_queued_jobs()

    job.refresh_from_db()
    assert (page.status_code, job.status) == (302, "succeeded")
    by_page = AuditSet.objects.get(name="By page")
    by_import = AuditSet.objects.get(name="By import")
    assert job.audit_set == by_import
    assert [
        (s.workspace, s.created_by, s.guidelines, _versions(s)[0][:3]) for s in (by_page, by_import)
    ] == [(default_workspace(), lead, "", (1, "", "First version."))] * 2
