"""Control claims: adjudicated claims mixed into reviewers' queues that look like any other
claim, count in no derived figure, and measure each reviewer against gold."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.models import (
    Adjudication,
    Assignment,
    AuditSheet,
    Claim,
    ClaimFact,
    ControlAssignment,
    PairFact,
    ReleaseFact,
    ReleaseTally,
    ReviewerTally,
    SheetFact,
)
from tests.factories import UserFactory, submit_sheet

pytestmark = pytest.mark.django_db


@pytest.fixture
def control(opened, reviewer_a, reviewer_b, lead) -> Claim:
    """The set's first claim, adjudicated by its two reviewers' lead and marked a control."""
    claim = Claim.objects.get(answer__external_id="hm-1-a", order=0)
    submit_sheet(reviewer_a, claim, "not_supported")
    b = submit_sheet(reviewer_b, claim, "unclear")
    services.adjudication_save(claim=claim, lead=lead, version=0, take=b.pk, reason="other")
    services.controls_mark(audit_set=opened, claim_ids=[claim.pk], by=lead)
    return claim


def _newcomer(audit_set, name: str):
    user = UserFactory(username=name, role="reviewer")
    audit_set.reviewers.add(user)
    return user


def _derived(audit_set) -> dict:
    """Every derived row a control's sheet must leave alone."""
    return {
        "sheet_facts": sorted(SheetFact.objects.values_list("claim_id", "reviewer_id", "judgment")),
        "pair_facts": sorted(PairFact.objects.values_list("claim_id", "judgment_a", "judgment_b")),
        "claim_facts": sorted(ClaimFact.objects.values_list("claim_id", "profile")),
        "release_facts": sorted(ReleaseFact.objects.values_list("claim_id", "supported", "worthy")),
        "release_tallies": sorted(ReleaseTally.objects.values_list("key", "claims")),
        "tallies": sorted(
            ReviewerTally.objects.values_list("reviewer_id", "assigned", "submitted")
        ),
        "claims": sorted(Claim.objects.values_list("pk", "review_status", "severity")),
        "gold": sorted(Adjudication.objects.values_list("claim_id", "judgment", "version")),
        "by_version": [
            (r.summary.n_items, r.summary.percent)
            for r in selectors.agreement_by_guideline_version(audit_set=audit_set)
        ],
    }


def test_only_adjudicated_claims_become_controls(opened, lead, control):
    other = Claim.objects.get(answer__external_id="hm-1-a", order=1)

    changed = services.controls_mark(audit_set=opened, claim_ids=[other.pk], by=lead)

    assert changed == 0
    assert list(selectors.set_controls(audit_set=opened).values_list("pk", flat=True)) == [
        control.pk
    ]


def test_controls_are_mixed_into_the_queues_at_the_rate(opened, lead, control):
    newcomer = _newcomer(opened, "rev_c")
    regular = list(Claim.objects.filter(answer__audit_set=opened).exclude(pk=control.pk)[:3])
    for claim in regular:
        Assignment.objects.create(claim=claim, reviewer=newcomer)

    added = services.control_settings_update(audit_set=opened, by=lead, rate=2, threshold=0.7)

    # rev_a and rev_b judged the control already; the newcomer gets it, in queue order.
    assert added == 1
    assert list(ControlAssignment.objects.values_list("claim_id", "reviewer__username")) == [
        (control.pk, "rev_c")
    ]
    assert selectors.next_claim_id(reviewer=newcomer, audit_set=opened) == control.pk
    place = selectors.queue_place(reviewer=newcomer, audit_set=opened, claim=control)
    assert (place.position, place.assigned) == (1, 1 + 0)


def test_a_control_sheet_counts_in_no_derived_figure(opened, lead, control):
    newcomer = _newcomer(opened, "rev_c")
    ControlAssignment.objects.create(claim=control, reviewer=newcomer)
    before = _derived(opened)

    submit_sheet(newcomer, control, "contradicted")

    assert AuditSheet.objects.filter(claim=control, reviewer=newcomer).get().status == "submitted"
    assert _derived(opened) == before


def _normalised(body: str, user) -> str:
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)
    body = re.sub(r'"x-csrftoken": "[^"]+"', "", body)
    body = re.sub(r'name="opened" value="[^"]+"', "", body)
    body = re.sub(r'nonce="[^"]+"', "", body)
    return body.replace(user.username, "USER")


def test_a_reviewer_gets_the_same_html_for_a_control_as_for_any_claim(
    client_for, opened, lead, control
):
    regular = _newcomer(opened, "rev_r")
    checked = _newcomer(opened, "rev_k")
    Assignment.objects.create(claim=control, reviewer=regular)
    services.claims_changed(claim_ids=[control.pk], reviewer_ids=[regular.pk])
    ControlAssignment.objects.create(claim=control, reviewer=checked)
    url = reverse("audit:review-claim", args=[control.pk])

    as_claim = client_for(regular).get(url).content.decode()
    as_control = client_for(checked).get(url).content.decode()

    assert "0 of 1 submitted" in as_control
    assert _normalised(as_control, checked) == _normalised(as_claim, regular)


def test_a_control_can_be_reopened_like_a_claim_still_in_review(client_for, opened, control):
    newcomer = _newcomer(opened, "rev_c")
    ControlAssignment.objects.create(claim=control, reviewer=newcomer)
    submit_sheet(newcomer, control, "unclear")

    response = client_for(newcomer).get(reverse("audit:review-claim", args=[control.pk]))

    assert 'id="reopen-sheet"' in response.content.decode()
    assert Adjudication.objects.filter(claim=control).exists()


def test_a_reviewer_cannot_split_a_control(opened, control):
    opened.allow_reviewer_split = True
    opened.save()
    newcomer = _newcomer(opened, "rev_c")
    ControlAssignment.objects.create(claim=control, reviewer=newcomer)

    with pytest.raises(services.ReviewError, match="can no longer be split"):
        services.claim_split(
            claim=control,
            parts=[services.AtomicPart("One.", None), services.AtomicPart("Two.", None)],
            by=newcomer,
        )


def test_controls_give_no_feedback_and_stay_blind(client_for, opened, control):
    newcomer = _newcomer(opened, "rev_c")
    ControlAssignment.objects.create(claim=control, reviewer=newcomer)
    submit_sheet(newcomer, control, "contradicted")

    body = client_for(newcomer).get(reverse("audit:my-feedback")).content.decode()

    assert "<strong>0</strong> of your 0 adjudicated sheets differ from gold." in body
    assert selectors.is_blind(user=newcomer, claim=control)


def test_a_reviewer_below_the_threshold_is_shown_and_can_be_paused(
    client_for, opened, lead, reviewer_a, reviewer_b
):
    claims = list(Claim.objects.filter(answer__audit_set=opened, parent__isnull=True)[:5])
    for claim in claims:
        submit_sheet(reviewer_a, claim, "not_supported")
        b = submit_sheet(reviewer_b, claim, "unclear")
        if not Adjudication.objects.filter(claim=claim).exists():
            services.adjudication_save(
                claim=claim, lead=lead, version=0, take=b.pk, reason="reviewer_error"
            )
    client = client_for(lead)

    progress = client.get(reverse("audit:set-progress", args=[opened.pk])).content.decode()
    paused = client.post(
        reverse("audit:reviewer-pause", args=[opened.pk]),
        {"reviewer": reviewer_a.pk, "paused": "1", "next": "progress"},
    )

    rows = {r.reviewer.username: r for r in selectors.set_calibration(audit_set=opened)}
    assert (
        rows["rev_a"].calibration.adjudicated.n,
        rows["rev_a"].calibration.adjudicated.accuracy,
    ) == (5, 0.0)
    assert (rows["rev_b"].below, rows["rev_a"].below) == (False, True)
    assert f'id="alert-{reviewer_a.pk}"' in progress
    assert f'id="alert-{reviewer_b.pk}"' not in progress
    assert paused.status_code == 302
    assert selectors.next_claim_id(reviewer=reviewer_a, audit_set=opened) is None
    assert AuditSheet.objects.filter(reviewer=reviewer_a, status="submitted").count() == 5
    left = Claim.objects.filter(answer__audit_set=opened).exclude(pk__in=[c.pk for c in claims])
    with pytest.raises(services.ReviewError, match="paused"):
        submit_sheet(reviewer_a, left.filter(assignments__reviewer=reviewer_a).first(), "unclear")


def test_a_reviewer_who_joins_after_the_rate_was_set_gets_controls_too(
    opened, lead, reviewer_b, control
):
    services.control_settings_update(audit_set=opened, by=lead, rate=2, threshold=0.7)
    newcomer = UserFactory(username="rev_late", role="reviewer")

    # The newcomer takes over reviewer B's unsubmitted claims; B judged the control.
    services.reviewer_replace(audit_set=opened, leaving=reviewer_b, joining=newcomer)

    assert Assignment.objects.filter(reviewer=newcomer).exists()
    assert list(
        ControlAssignment.objects.filter(reviewer=newcomer).values_list("claim_id", flat=True)
    ) == [control.pk]
