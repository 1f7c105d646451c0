"""A lead who also reviews: until they submit their own sheet of a claim, no page, fragment
or export shows them another sheet of it, nor what the other sheets decide."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.models import Claim
from audit.services import EvidenceRef, SheetData
from tests.conftest import api_client
from tests.factories import UserFactory, claim_at

pytestmark = pytest.mark.django_db

SECRET = "A-SECRET-NOTE-5521"
DRAFT_SECRET = "A-DRAFT-NOTE-8812"
FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."


@pytest.fixture
def lena(db):
    """A lead who also reviews: the service takes any user as a reviewer."""
    return UserFactory(username="lena", role="lead")


@pytest.fixture
def opened(handmade, reviewer_a, reviewer_b, lena, lead):
    handmade.reviewers.add(lena)
    services.review_open(
        audit_set=handmade, reviewers=[reviewer_a, reviewer_b, lena], overlap=3, by=lead
    )
    return handmade


def _write(user, claim: Claim, *, submit: bool, **data):
    sheet = services.sheet_for(claim=claim, reviewer=user)
    write = services.sheet_submit if submit else services.sheet_save
    return write(sheet=sheet, user=user, version=sheet.version, data=SheetData(**data))


@pytest.fixture
def claims(opened, reviewer_a, reviewer_b, lena):
    """blind: A and B submitted, Lena has not; drafted: only A's draft; judged: all three in."""
    blind, drafted, judged = claim_at("hm-1-a", 0), claim_at("hm-1-a", 1), claim_at("hm-1-a", 2)
    source = blind.answer.passages.get(position=1).text
    start = source.index(FULL_TIME)
    evidence = (EvidenceRef(passage=1, start=start, end=start + len(FULL_TIME)),)
    _write(reviewer_a, blind, submit=True, judgment="contradicted", notes=SECRET, evidence=evidence)
    _write(reviewer_b, blind, submit=True, judgment="contradicted", notes=SECRET)
    _write(reviewer_a, drafted, submit=False, judgment="not_supported", notes=DRAFT_SECRET)
    for user in (reviewer_a, reviewer_b, lena):
        _write(user, judged, submit=True, judgment="not_supported")
    services.criteria_update(
        audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lena, reason="set late"
    )
    return {"blind": blind, "drafted": drafted, "judged": judged}


def test_history_and_adjudication_of_a_claim_the_lead_reviews_stay_closed(client_for, claims, lena):
    client = client_for(lena)
    responses = []
    for claim in (claims["blind"], claims["drafted"]):
        responses += [
            client.get(reverse("audit:claim-history", args=[claim.pk])),
            client.get(reverse("audit:adjudicate", args=[claim.pk])),
            client.post(
                reverse("audit:adjudicate-save", args=[claim.pk]),
                {"version": 0, "judgment": "contradicted"},
            ),
        ]
    opened_after = client.get(reverse("audit:claim-history", args=[claims["judged"].pk]))

    assert [r.status_code for r in responses] == [403] * 6
    for response in responses:
        body = response.content.decode()
        assert SECRET not in body and DRAFT_SECRET not in body
        assert response.templates[0].name == "audit/claim_blind.html"
    assert opened_after.status_code == 200


def test_exports_hold_only_the_leads_own_sheet_of_a_claim_they_review(client_for, claims, lena):
    client = client_for(lena)

    def export(fmt: str) -> str:
        response = client.get(
            reverse("audit:set-export", args=[claims["blind"].answer.audit_set_id, fmt])
        )
        return b"".join(response.streaming_content).decode("utf-8-sig")

    lines = {
        line["claim"]["db_id"]: line
        for line in map(json.loads, export("jsonl").splitlines())
        if line["record"] == "claim"
    }
    sheets = json.loads(export("audit-sheets"))
    others = {fmt: export(fmt) for fmt in ("csv", "evidence")}

    reviewers = {
        name: [s["reviewer"] for s in lines[claims[name].pk]["sheets"]]
        for name in ("blind", "drafted", "judged")
    }
    assert reviewers == {"blind": [], "drafted": [], "judged": ["lena", "rev_a", "rev_b"]}
    assert sorted(
        (item["claim_id"], item["reviewer"]) for item in sheets if item["kind"] == "sheet"
    ) == sorted((claims["judged"].pk, name) for name in ("lena", "rev_a", "rev_b"))
    for body in (*others.values(), json.dumps(lines), json.dumps(sheets)):
        assert SECRET not in body and DRAFT_SECRET not in body
    assert "contradicted" not in others["csv"]
    assert FULL_TIME[:60] not in others["evidence"]


def test_exports_for_a_lead_who_does_not_review_the_claim_hold_every_sheet(
    client_for, claims, lead
):
    response = client_for(lead).get(
        reverse("audit:set-export", args=[claims["blind"].answer.audit_set_id, "jsonl"])
    )

    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    blind = next(
        line
        for line in lines
        if line["record"] == "claim" and line["claim"]["db_id"] == claims["blind"].pk
    )
    assert [s["reviewer"] for s in blind["sheets"]] == ["rev_a", "rev_b"]


def test_claims_table_shows_a_claim_the_lead_reviews_as_in_review(client_for, claims, lena, lead):
    url = reverse("audit:set-claims", args=[claims["blind"].answer.audit_set_id])

    def rows(user, **query) -> dict[int, tuple[str, int]]:
        table = client_for(user).get(url, query).context["table"]
        return {
            row.record.pk: (row.record.status, row.record.submitted_count) for row in table.rows
        }

    mine = rows(lena)
    theirs = rows(lead)

    assert mine[claims["blind"].pk] == ("in_review", 0)
    assert theirs[claims["blind"].pk] == ("partly_submitted", 2)
    assert mine[claims["judged"].pk] == theirs[claims["judged"].pk]
    assert claims["blind"].pk not in rows(lena, status="partly_submitted")


def test_answer_page_shows_no_evidence_of_a_claim_the_lead_reviews(client_for, claims, lena, lead):
    url = claims["blind"].answer.get_absolute_url()

    def sources(user) -> list[str]:
        return sorted(row.source for row in client_for(user).get(url).context["evidence_rows"])

    assert (sources(lena), sources(lead)) == ([], ["rev_a"])


def test_report_and_agreement_lists_leave_out_claims_the_lead_reviews(
    client_for, claims, lena, lead
):
    audit_set_id = claims["blind"].answer.audit_set_id
    report = reverse("audit:set-report-claims", args=[audit_set_id])
    cells = reverse("audit:agreement-claims", args=[audit_set_id])

    def listed(user) -> tuple[list[int], list[int]]:
        client = client_for(user)
        failing = client.get(report, {"system": claims["blind"].answer.system, "criterion": 1})
        cell = client.get(cells, {"row": "contradicted", "col": "contradicted"})
        return (
            [c.pk for c in failing.context["rows"]],
            [c.pk for c in cell.context["rows"]],
        )

    assert listed(lead) == ([claims["blind"].pk], [claims["blind"].pk])
    assert listed(lena) == ([], [])


def test_once_the_lead_submits_the_claim_opens_to_them(client_for, claims, lena):
    _write(lena, claims["blind"], submit=True, judgment="contradicted")

    response = client_for(lena).get(reverse("audit:claim-history", args=[claims["blind"].pk]))

    assert response.status_code == 200
    assert SECRET in response.content.decode()


def test_progress_page_hides_other_reviewers_flags_on_a_claim_the_lead_reviews(
    client_for, claims, reviewer_a, lena, lead
):
    for claim in (claims["blind"], claims["judged"]):
        services.guideline_flag_raise(claim=claim, user=reviewer_a, comment=f"flag {claim.pk}")
    services.guideline_flag_raise(claim=claims["blind"], user=lena, comment="my own flag")
    url = reverse("audit:set-progress", args=[claims["blind"].answer.audit_set_id])

    def comments(user) -> list[str]:
        return sorted(flag.comment for flag in client_for(user).get(url).context["flags"])

    assert comments(lena) == sorted([f"flag {claims['judged'].pk}", "my own flag"])
    assert comments(lead) == sorted(
        [f"flag {claims['blind'].pk}", f"flag {claims['judged'].pk}", "my own flag"]
    )


def test_every_door_decides_for_a_lead_who_reviews_without_the_claim_they_review(
    client_for, claims, lena, lead
):
    audit_set = claims["blind"].answer.audit_set
    system = claims["blind"].answer.system

    def doors(user) -> list[tuple]:
        client, api = client_for(user), api_client(user)
        summary = client.get(reverse("audit:set-detail", args=[audit_set.pk])).context["release"]
        overview = client.get(reverse("audit:set-report", args=[audit_set.pk])).context["overview"]
        decision = api.get(f"/api/v1/sets/{audit_set.pk}/decision", {"system": system}).json()
        report = api.get(f"/api/v1/sets/{audit_set.pk}/report").json()
        on_page = [r for r in [*summary.systems, *overview.systems] if r.system == system]
        return [
            *((r.badge, r.decision.passed) for r in on_page),
            (decision["decision"], decision["passed"]),
            *((r["decision"],) for r in report["systems"] if r["system"] == system),
        ]

    # The lead who does not review sees A's and B's agreed "contradicted"; Lena, who still
    # reviews that claim, decides as if nobody had judged it, on every door alike.
    assert doors(lead) == [("provisional", False)] * 3 + [("provisional",)]
    assert doors(lena) == [("provisional", True)] * 3 + [("provisional",)]
    # The gate and the webhook see everything, as the lead who does not review does.
    assert selectors.release_outcomes(audit_set_id=audit_set.pk)[system] == "provisional-fail"
