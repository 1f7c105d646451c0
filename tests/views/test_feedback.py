"""Feedback after adjudication: a reviewer's *My feedback* page and a training set's gold
after each submit, never before the claim is adjudicated and every sheet is in."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit import services
from audit.models import Assignment, Claim
from tests.factories import UserFactory, submit_sheet

pytestmark = pytest.mark.django_db

NOTE = "Section 4 says twenty days, not twenty-five."


def _counts(body: str) -> str:
    return re.sub(r"<[^>]+>", "", re.search(r'<p id="feedback-counts">(.*?)</p>', body).group(1))


def _adjudicated(claim, reviewer_a, reviewer_b, lead):
    submit_sheet(reviewer_a, claim, "not_supported")
    b = submit_sheet(reviewer_b, claim, "unclear")
    return services.adjudication_save(
        claim=claim, lead=lead, version=0, take=b.pk, reason="reviewer_error", note=NOTE
    )


def test_feedback_lists_the_claims_where_gold_differs_from_the_own_sheet(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    _adjudicated(claim, reviewer_a, reviewer_b, lead)

    body_a = client_for(reviewer_a).get(reverse("audit:my-feedback")).content.decode()
    body_b = client_for(reviewer_b).get(reverse("audit:my-feedback")).content.decode()

    fields = dict(re.findall(r"<dt>([^<]+)</dt><dd[^>]*>(.*?)</dd>", body_a))
    assert _counts(body_a) == "1 of your 1 adjudicated sheet differs from gold."
    assert fields["Your judgment"] == "Not supported"
    assert fields["Gold"] == "<strong>Unclear</strong>"
    assert fields["Lead’s reason"] == "Reviewer error"
    assert fields["Lead’s note"] == NOTE
    assert fields["Differs in"] == "judgment"
    assert _counts(body_b) == "0 of your 1 adjudicated sheet differ from gold."
    assert NOTE not in body_b


def test_feedback_shows_nothing_before_the_claim_is_adjudicated(
    client_for, opened, claim, reviewer_a, reviewer_b
):
    submit_sheet(reviewer_a, claim, "not_supported")
    submit_sheet(reviewer_b, claim, "unclear")

    body = client_for(reviewer_a).get(reverse("audit:my-feedback")).content.decode()

    assert _counts(body) == "0 of your 0 adjudicated sheets differ from gold."
    assert "Unclear" not in body
    assert 'id="no-feedback"' in body


def test_a_reviewer_added_after_gold_learns_nothing_until_their_own_sheet_is_in(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    _adjudicated(claim, reviewer_a, reviewer_b, lead)
    late = UserFactory(username="rev_c", role="reviewer")
    opened.reviewers.add(late)
    Assignment.objects.create(claim=claim, reviewer=late)

    before_late = client_for(late).get(reverse("audit:my-feedback")).content.decode()
    before_a = client_for(reviewer_a).get(reverse("audit:my-feedback")).content.decode()
    review_page = client_for(late).get(reverse("audit:review-claim", args=[claim.pk]))
    submit_sheet(late, claim, "not_supported")
    after_late = client_for(late).get(reverse("audit:my-feedback")).content.decode()

    # Blind: no count, note, or gold judgment while any assigned sheet is missing.
    assert _counts(before_late) == "0 of your 0 adjudicated sheets differ from gold."
    assert _counts(before_a) == "0 of your 0 adjudicated sheets differ from gold."
    assert NOTE not in before_late + before_a
    assert review_page.context["training_gold"] is None
    assert NOTE not in review_page.content.decode()
    assert _counts(after_late) == "1 of your 1 adjudicated sheet differs from gold."
    assert NOTE in after_late


def test_a_training_set_shows_gold_right_after_the_submit(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    _adjudicated(claim, reviewer_a, reviewer_b, lead)
    opened.is_training = True
    opened.save()
    trainee = UserFactory(username="trainee", role="reviewer")
    opened.reviewers.add(trainee)
    Assignment.objects.create(claim=claim, reviewer=trainee)
    Assignment.objects.create(
        claim=Claim.objects.get(answer__external_id="hm-1-a", order=1), reviewer=trainee
    )
    client = client_for(trainee)

    before = client.get(reverse("audit:review-claim", args=[claim.pk])).content.decode()
    response = client.post(
        reverse("audit:review-submit", args=[claim.pk]),
        {"version": 1, "judgment": "not_supported", "verification_worthy": "on"},
    )
    after = client.get(response["Location"]).content.decode()

    assert "training-gold" not in before
    assert NOTE not in before
    assert response["Location"] == reverse("audit:review-claim", args=[claim.pk])
    assert 'class="training-gold"' in after
    assert NOTE in after
    assert "Reviewer error" in after


def test_outside_a_training_set_the_submit_moves_on_without_gold(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    _adjudicated(claim, reviewer_a, reviewer_b, lead)
    trainee = UserFactory(username="trainee", role="reviewer")
    opened.reviewers.add(trainee)
    Assignment.objects.create(claim=claim, reviewer=trainee)
    client = client_for(trainee)

    response = client.post(
        reverse("audit:review-submit", args=[claim.pk]),
        {"version": 1, "judgment": "not_supported", "verification_worthy": "on"},
        follow=True,
    )

    assert NOTE not in response.content.decode()
    assert 'class="training-gold"' not in response.content.decode()
