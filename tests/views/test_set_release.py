"""The release summary on the set page always equals the report's, right after any write."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import services
from audit.models import AuditSheet, Claim, Passage, ReviewerTally, ReviewStatus, SheetFact
from tests.factories import answer_with_claims


def _both(client, audit_set) -> tuple[str, str]:
    """(set page's overall figure, report page's overall figure)."""
    detail = client.get(reverse("audit:set-detail", args=[audit_set.pk]))
    report = client.get(reverse("audit:set-report", args=[audit_set.pk]))
    return (
        detail.context["release"].overall.supported_text,
        report.context["overview"].overall.supported_text,
    )


def _submit(claim: Claim, reviewer) -> None:
    sheet = services.sheet_for(claim=claim, reviewer=reviewer)
    services.sheet_submit(
        sheet=sheet,
        user=reviewer,
        version=sheet.version,
        data=services.SheetData(
            # "The first sentence." in the factory's passage.
            judgment="supported",
            evidence=(services.EvidenceRef(passage=1, start=0, end=19),),
        ),
    )


@pytest.mark.django_db
def test_set_page_stops_counting_a_claim_as_supported_once_a_lead_splits_it(
    client_for, lead, reviewer_a, reviewer_b, audit_set
):
    audit_set.auto_gold = False  # agreed, not yet adjudicated: a lead may still split it
    audit_set.save(update_fields=["auto_gold"])
    _answer, (claim,) = answer_with_claims(audit_set, 1)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    _submit(claim, reviewer_a)
    _submit(claim, reviewer_b)
    client = client_for(lead)
    assert _both(client, audit_set) == ("1 of 1", "1 of 1")

    services.claim_split(
        claim=claim, parts=[services.AtomicPart("One."), services.AtomicPart("Two.")], by=lead
    )

    # Its atomic claims are not judged yet: one claim, none supported, as the report says.
    assert _both(client, audit_set) == ("0 of 1", "0 of 1")


@pytest.mark.django_db
def test_deleting_a_submitted_sheet_in_the_admin_refreshes_status_tally_facts_and_set_page(
    admin_client, client_for, lead, reviewer_a, reviewer_b, audit_set
):
    audit_set.auto_gold = False
    audit_set.save(update_fields=["auto_gold"])
    _answer, (claim,) = answer_with_claims(audit_set, 1)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    _submit(claim, reviewer_a)
    _submit(claim, reviewer_b)
    client = client_for(lead)
    assert _both(client, audit_set) == ("1 of 1", "1 of 1")
    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_b)

    response = admin_client.post(
        reverse("admin:audit_auditsheet_delete", args=[sheet.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    claim.refresh_from_db()
    assert claim.review_status == ReviewStatus.PARTLY
    assert ReviewerTally.objects.get(audit_set=audit_set, reviewer=reviewer_b).submitted == 0
    assert list(SheetFact.objects.filter(claim=claim).values_list("reviewer_id", flat=True)) == [
        reviewer_a.pk
    ]
    assert _both(client, audit_set) == ("1 of 1", "1 of 1")


@pytest.mark.django_db
def test_set_page_shows_a_criteria_change_at_once(
    client_for, lead, reviewer_a, reviewer_b, audit_set
):
    _answer, (claim,) = answer_with_claims(audit_set, 1)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    client = client_for(lead)
    url = reverse("audit:set-detail", args=[audit_set.pk])

    def badges() -> list[tuple[str, str]]:
        return [(item.system, item.badge) for item in client.get(url).context["release"].systems]

    assert badges() == [("sys-1", "none")]

    services.criteria_update(
        audit_set=audit_set,
        criteria=[{"kind": "no_contradicted"}],
        by=lead,
    )

    # Not judged yet: the decision is provisional, and says so at once.
    assert badges() == [("sys-1", "provisional")]


@pytest.mark.django_db
def test_deleting_a_question_in_the_admin_updates_the_set_page_and_tallies(
    admin_client, client_for, lead, reviewer_a, reviewer_b, audit_set
):
    # Not yet judged: the admin refuses to delete a claim whose agreement facts exist.
    answer, _claims = answer_with_claims(audit_set, 1)
    answer_with_claims(audit_set, 1)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    client = client_for(lead)
    assert _both(client, audit_set) == ("0 of 2", "0 of 2")

    response = admin_client.post(
        reverse("admin:audit_question_delete", args=[answer.question_id]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert _both(client, audit_set) == ("0 of 1", "0 of 1")
    assert sorted(
        ReviewerTally.objects.filter(audit_set=audit_set).values_list("assigned", "submitted")
    ) == [(1, 0), (1, 0)]


@pytest.mark.django_db
def test_set_page_shows_new_machine_checks_after_a_rematch(client_for, lead, audit_set):
    answer, (claim,) = answer_with_claims(audit_set, 1, passage="Revenue rose 12% in 2020.")
    Claim.objects.filter(pk=claim.pk).update(text="Revenue rose 12%.")
    services.claim_checks_recompute(audit_set=audit_set)
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "numbers_grounded"}], by=lead)
    client = client_for(lead)
    url = reverse("audit:set-detail", args=[audit_set.pk])

    def passes() -> list[bool]:
        return [item.decision.passed for item in client.get(url).context["release"].systems]

    assert passes() == [True]

    # The source as a new matcher run reads it: the number is no longer there.
    Passage.objects.filter(answer=answer).update(text="Revenue rose in 2020.")
    services.claim_checks_recompute(audit_set=audit_set)

    assert passes() == [False]
