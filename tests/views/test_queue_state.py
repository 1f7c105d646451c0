"""A reviewer's queue state is told where they look: paused, not open, nothing assigned
yet, to do or all done, on the home card and on the review page as it loads; a new
reviewer of an adjudicated set gets a calibration-only queue of controls."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.models import AuditSet, AuditSheet, Claim, ControlAssignment
from tests.factories import UserFactory, default_workspace, submit_sheet

pytestmark = pytest.mark.django_db


def _home_states(client) -> dict[str, str]:
    rows = client.get(reverse("audit:home")).context["my_sets"]
    return {row.name: queue.state for row, queue in rows}


def test_each_queue_state_shows_on_the_home_card(client_for, opened, reviewer_a, lead):
    newcomer = UserFactory(username="nina", role="reviewer")
    opened.reviewers.add(newcomer)
    unopened = AuditSet.objects.create(workspace=default_workspace(), name="Next week")
    unopened.reviewers.add(newcomer)

    assert _home_states(client_for(newcomer)) == {
        "Calibration": "nothing_yet",
        "Next week": "not_open",
    }
    page = client_for(newcomer).get(reverse("audit:home")).text
    assert "no claim is assigned to you yet" in page
    assert "Not open for review yet." in page
    assert reverse("audit:review-continue", args=[opened.pk]) not in page

    assert _home_states(client_for(reviewer_a)) == {"Calibration": "to_do"}
    services.reviewer_pause(audit_set=opened, reviewer=reviewer_a, by=lead, paused=True)
    page = client_for(reviewer_a).get(reverse("audit:home")).text
    assert _home_states(client_for(reviewer_a)) == {"Calibration": "paused"}
    assert "Paused by a lead" in page
    # No Continue while paused: the card says why instead.
    assert reverse("audit:review-continue", args=[opened.pk]) not in page


def test_a_paused_queue_opens_its_claims_read_only_and_says_so_on_load(
    client_for, opened, reviewer_a, lead
):
    claim = Claim.objects.filter(answer__audit_set=opened).order_by("pk").first()
    url = reverse("audit:review-claim", args=[claim.pk])
    assert 'id="submit-sheet"' in client_for(reviewer_a).get(url).text

    services.reviewer_pause(audit_set=opened, reviewer=reviewer_a, by=lead, paused=True)
    page = client_for(reviewer_a).get(url).text

    assert 'id="paused-note"' in page
    assert 'data-paused="1"' in page
    assert 'id="submit-sheet"' not in page
    assert 'id="save-draft"' not in page
    assert not AuditSheet.objects.filter(claim=claim, reviewer=reviewer_a).exists()

    services.reviewer_pause(audit_set=opened, reviewer=reviewer_a, by=lead, paused=False)
    assert 'id="paused-note"' not in client_for(reviewer_a).get(url).text


def test_a_new_reviewer_of_an_adjudicated_set_gets_a_calibration_only_queue(
    client_for, opened, reviewer_a, reviewer_b, lead
):
    controls = list(Claim.objects.filter(answer__audit_set=opened).order_by("pk")[:3])
    for claim in controls:
        submit_sheet(reviewer_a, claim, "not_supported")
        submit_sheet(reviewer_b, claim, "not_supported")
    services.controls_mark(audit_set=opened, claim_ids=[c.pk for c in controls], by=lead)
    newcomer = UserFactory(username="nina", role="reviewer")
    opened.reviewers.add(newcomer)

    response = client_for(lead).post(
        reverse("audit:set-calibration", args=[opened.pk]),
        {"action": "settings", "control_rate": 5, "calibration_threshold": 0.7},
        follow=True,
    )

    # The two first reviewers judged every control; the newcomer, with no regular claim,
    # gets all three, and judges them as any claim.
    assert "Saved; 3 controls mixed into queues." in response.text
    assert sorted(
        ControlAssignment.objects.filter(reviewer=newcomer).values_list("claim_id", flat=True)
    ) == sorted(c.pk for c in controls)
    assert _home_states(client_for(newcomer)) == {"Calibration": "to_do"}
    assert selectors.next_claim_id(reviewer=newcomer, audit_set=opened) in {c.pk for c in controls}


def test_saving_settings_that_mix_nothing_says_why(client_for, opened, lead):
    url = reverse("audit:set-calibration", args=[opened.pk])

    response = client_for(lead).post(
        url, {"action": "settings", "control_rate": 5, "calibration_threshold": 0.7}, follow=True
    )

    assert "no control mixed into a queue: no claim is marked as a control yet" in response.text


def test_the_top_bar_names_an_owner_as_owner(client_for, lead):
    owner = UserFactory(username="olga", role="owner")

    assert "olga · owner" in client_for(owner).get(reverse("audit:home")).text
    assert "lead · lead" in client_for(lead).get(reverse("audit:home")).text
