"""Form errors on the review and adjudication pages name fields by the labels a person
reads there, not by the names they have in the code."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import services
from audit.models import Claim

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def claim(handmade, reviewer_a, reviewer_b, lead) -> Claim:
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    return Claim.objects.get(answer__external_id="hm-1-a", order=0)


def test_review_save_error_names_the_field_by_its_label(client_for, reviewer_a, claim):
    response = client_for(reviewer_a).post(
        reverse("audit:review-save", args=[claim.pk]),
        {"version": 1, "active_seconds": 0, "unsupported_assertions": "x" * 5001},
        **HTMX,
    )

    assert response.status_code == 400
    assert response.context["save_problems"] == [
        "Unsupported assertions: Ensure this value has at most 5000 characters (it has 5001)."
    ]


def test_adjudication_error_names_the_field_by_its_label(client_for, lead, claim):
    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[claim.pk]), {"version": 0, "flag": "on"}
    )

    assert response.status_code == 400
    assert response.context["problems"] == ["Flag comment: Say what the guidelines should settle."]
