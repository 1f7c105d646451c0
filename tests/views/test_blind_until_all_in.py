"""A lead who also reviews a claim sees nothing of the co-reviewer's sheet, drafts included,
on any door (history, adjudication, exports, API, claims table) until every sheet on the
claim is submitted; a reopen after seeing the other sheet sends the claim to a lead."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from audit import services
from audit.models import Adjudication, AuditSheet, Claim, ReviewStatus, Severity
from audit.services import SheetData
from tests.conftest import api_client
from tests.factories import UserFactory, claim_at

pytestmark = pytest.mark.django_db

DRAFT_NOTE = "CO-REVIEWER-DRAFT-4471"
LATER_NOTE = "CO-REVIEWER-DRAFT-4472"
EXPORTS = ("csv", "jsonl", "audit-sheets", "evidence")


@pytest.fixture
def lena(db):
    return UserFactory(username="lena", role="lead")


@pytest.fixture
def pair(handmade, reviewer_a, lena, lead):
    """Every claim assigned to Lena (a lead) and reviewer A."""
    handmade.reviewers.add(lena)
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, lena], overlap=2, by=lead)
    return handmade


def _write(user, claim: Claim, *, submit: bool, **data) -> AuditSheet:
    sheet = services.sheet_for(claim=claim, reviewer=user)
    write = services.sheet_submit if submit else services.sheet_save
    return write(sheet=sheet, user=user, version=sheet.version, data=SheetData(**data))


@pytest.fixture
def half_in(pair, reviewer_a, lena) -> Claim:
    """Lena submitted; A saved two drafts and has not submitted."""
    claim = claim_at("hm-1-a", 0)
    _write(lena, claim, submit=True, judgment="not_supported")
    _write(reviewer_a, claim, submit=False, judgment="contradicted", notes=DRAFT_NOTE)
    _write(reviewer_a, claim, submit=False, judgment="contradicted", notes=LATER_NOTE)
    return claim


def _bodies(client, claim: Claim) -> dict[str, tuple[int, str]]:
    """Every door that shows sheets of the claim, by name: (status, body)."""
    set_id = claim.answer.audit_set_id
    pages = {
        "history": reverse("audit:claim-history", args=[claim.pk]),
        "adjudicate": reverse("audit:adjudicate", args=[claim.pk]),
        "answer": claim.answer.get_absolute_url(),
        "claims-table": reverse("audit:set-claims", args=[set_id]),
        "progress": reverse("audit:set-progress", args=[set_id]),
    }
    found = {}
    for name, url in pages.items():
        response = client.get(url)
        found[name] = (response.status_code, response.content.decode())
    for fmt in EXPORTS:
        response = client.get(reverse("audit:set-export", args=[set_id, fmt]))
        found[fmt] = (
            response.status_code,
            b"".join(response.streaming_content).decode("utf-8-sig"),
        )
    return found


def _api(user, claim: Claim) -> dict[str, dict]:
    client = api_client(user, scope="read")
    set_id = claim.answer.audit_set_id
    return {
        "claim": client.get(f"/api/v1/claims/{claim.pk}").json(),
        "sheets": client.get(f"/api/v1/sets/{set_id}/sheets?limit=200").json(),
        "claims": client.get(f"/api/v1/sets/{set_id}/claims?limit=200").json(),
    }


def test_lead_who_reviews_sees_no_draft_of_the_co_reviewer_after_submitting(
    client_for, half_in, lena, reviewer_a
):
    bodies = _bodies(client_for(lena), half_in)
    api = _api(lena, half_in)
    reviewer_api = _api(reviewer_a, half_in)

    assert bodies["history"][0] == 403
    assert bodies["adjudicate"][0] == 403
    leaked = [
        name for name, (_status, body) in bodies.items() if DRAFT_NOTE in body or LATER_NOTE in body
    ]
    assert leaked == []
    assert [s["reviewer"] for s in api["claim"]["sheets"]] == ["lena"]
    assert api["claim"]["gold"] is None
    assert {s["reviewer"] for s in api["sheets"]["items"] if s["claim"] == half_in.pk} == {"lena"}
    assert DRAFT_NOTE not in json.dumps(api) and LATER_NOTE not in json.dumps(api)
    statuses = {c["id"]: c["status"] for c in api["claims"]["items"]}
    assert statuses[half_in.pk] == ReviewStatus.IN_REVIEW
    # A reviewer who is not a lead sees their own sheet only, as ever.
    assert [s["reviewer"] for s in reviewer_api["claim"]["sheets"]] == ["rev_a"]


def test_claims_table_and_jsonl_show_nothing_of_the_other_sheet_until_both_are_in(
    client_for, half_in, reviewer_a, lena, lead
):
    url = reverse("audit:set-claims", args=[half_in.answer.audit_set_id])
    export = reverse("audit:set-export", args=[half_in.answer.audit_set_id, "jsonl"])

    def row(user) -> tuple[str, int]:
        table = client_for(user).get(url).context["table"]
        found = next(r.record for r in table.rows if r.record.pk == half_in.pk)
        return found.status, found.submitted_count

    def reviewers(user) -> list[str]:
        body = b"".join(client_for(user).get(export).streaming_content)
        line = next(
            item
            for item in map(json.loads, body.splitlines())
            if item["record"] == "claim" and item["claim"]["db_id"] == half_in.pk
        )
        return [s["reviewer"] for s in line["sheets"]]

    before = (row(lena), reviewers(lena), reviewers(lead))
    _write(reviewer_a, half_in, submit=True, judgment="contradicted", notes="final")
    after = (row(lena), reviewers(lena))
    history = client_for(lena).get(reverse("audit:claim-history", args=[half_in.pk]))

    assert before == (("in_review", 0), ["lena"], ["lena", "rev_a"])
    assert after == (("disagreement", 2), ["lena", "rev_a"])
    # Every sheet in: the history opens, the co-reviewer's drafts included.
    assert history.status_code == 200
    assert DRAFT_NOTE in history.content.decode()


def test_reopen_after_seeing_the_other_sheet_needs_a_lead(
    client_for, half_in, reviewer_a, lena, lead
):
    client = client_for(lena)
    history = reverse("audit:claim-history", args=[half_in.pk])
    while_drafting = client.get(history).status_code
    # Both judge alike: unanimous gold, which Lena may now read with A's sheet.
    _write(reviewer_a, half_in, submit=True, judgment="not_supported", notes=LATER_NOTE)
    gold_before = Adjudication.objects.filter(claim=half_in).exists()
    seen = LATER_NOTE in client.get(history).content.decode()
    sheet = services.sheet_for(claim=half_in, reviewer=lena)
    services.sheet_reopen(sheet=sheet, user=lena)
    _write(lena, half_in, submit=True, judgment="not_supported")
    half_in.refresh_from_db()

    assert (while_drafting, gold_before, seen) == (403, True, True)
    assert AuditSheet.objects.get(claim=half_in, reviewer=lena).reopened_after_all_in is True
    assert not Adjudication.objects.filter(claim=half_in).exists()
    # Waiting for a lead: in the adjudication queue, which shows why.
    assert half_in.severity == Severity.CONFIRM
    page = client_for(lead).get(reverse("audit:adjudicate", args=[half_in.pk]))
    assert "reopened after every sheet was in" in page.content.decode()
