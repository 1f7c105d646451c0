"""Incremental pulls: the sheets, gold and claims lists filtered by when a row was last
written, the question, the import batch and the system, never showing more than the
unfiltered list would."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditSheet, Claim
from tests.conftest import api_client, gold_by_agreement
from tests.factories import claim_at, submit_sheet

pytestmark = pytest.mark.django_db


def _items(response) -> list[dict]:
    assert response.status_code == 200, response.content[:300]
    return response.json()["items"]


def _gold(response) -> list[dict]:
    assert response.status_code == 200, response.content[:300]
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def test_a_sheet_submitted_after_a_time_is_pulled_since_then(opened, lead, reviewer_a):
    early, late = claim_at("hm-1-a", 0), claim_at("hm-1-a", 1)
    submit_sheet(reviewer_a, early, "not_supported")
    AuditSheet.objects.filter(claim=early).update(updated_at=timezone.now() - timedelta(hours=1))
    since = timezone.now() - timedelta(minutes=1)
    submit_sheet(reviewer_a, late, "not_supported")
    url = f"/api/v1/sets/{opened.pk}/sheets"
    pulled = _items(api_client(lead).get(url, {"updated_since": since.isoformat()}))
    assert [s["claim"] for s in pulled] == [late.pk]
    assert len(_items(api_client(lead).get(url))) == 2


def test_a_reviewer_pulls_nothing_of_another_reviewers_sheets(opened, reviewer_a, reviewer_b):
    since = timezone.now() - timedelta(minutes=1)
    submit_sheet(reviewer_a, claim_at("hm-1-a", 0), "not_supported")
    url = f"/api/v1/sets/{opened.pk}/sheets"
    client = api_client(reviewer_b)
    for query in (
        {"updated_since": since.isoformat()},
        {"question": "hm-1"},
        {"system": "handmade v1"},
    ):
        assert _items(client.get(url, query)) == []
        own = _items(api_client(reviewer_a).get(url, query))
        assert [s["reviewer"] for s in own] == [reviewer_a.username]


def test_gold_is_pulled_since_a_time_and_by_question(opened, lead, reviewer_a, reviewer_b):
    first, other = claim_at("hm-1-a", 0), claim_at("hm-2-a", 0)
    gold_by_agreement([reviewer_a, reviewer_b], first)
    since = timezone.now()
    gold_by_agreement([reviewer_a, reviewer_b], other)
    url = f"/api/v1/sets/{opened.pk}/gold"
    client = api_client(lead)
    assert [r["claim"] for r in _gold(client.get(url, {"updated_since": since.isoformat()}))] == [
        other.pk
    ]
    assert [r["claim"] for r in _gold(client.get(url, {"question": "hm-1"}))] == [first.pk]
    assert _gold(client.get(url, {"system": "nope"})) == []


def test_claims_are_pulled_by_question_and_import_batch(opened, lead, reviewer_a):
    url = f"/api/v1/sets/{opened.pk}/claims"
    of_question = Claim.objects.filter(answer__question__external_id="hm-2")
    expected = sorted(of_question.values_list("pk", flat=True))
    for client in (api_client(lead), api_client(reviewer_a)):
        pulled = _items(client.get(url, {"question": "hm-2", "limit": 500}))
        assert [c["id"] for c in pulled] == expected
    batch = claim_at("hm-1-a", 0).answer.import_batch_id
    every = _items(api_client(lead).get(url, {"limit": 500}))
    assert len(_items(api_client(lead).get(url, {"batch": batch, "limit": 500}))) == len(every)
    assert _items(api_client(lead).get(url, {"batch": batch + 1000})) == []


@pytest.mark.parametrize("path", ["sheets", "gold"])
def test_a_bad_updated_since_is_422_naming_it(opened, lead, path):
    response = api_client(lead).get(
        f"/api/v1/sets/{opened.pk}/{path}", {"updated_since": "yesterday"}
    )
    assert response.status_code == 422
    assert "updated_since" in response.json()["detail"]


def test_a_bad_batch_is_422_naming_it(opened, lead):
    response = api_client(lead).get(f"/api/v1/sets/{opened.pk}/claims", {"batch": "x"})
    assert response.status_code == 422
    assert "batch" in response.json()["detail"]


def test_a_claim_whose_sheet_is_submitted_after_a_time_is_pulled_since_then(
    opened, lead, reviewer_a, reviewer_b
):
    url = f"/api/v1/sets/{opened.pk}/claims"
    Claim.objects.update(updated_at=timezone.now() - timedelta(hours=1))
    since = (timezone.now() - timedelta(minutes=1)).isoformat()
    assert _items(api_client(lead).get(url, {"updated_since": since})) == []
    claim = claim_at("hm-1-a", 0)
    submit_sheet(reviewer_a, claim, "not_supported")
    assert [c["id"] for c in _items(api_client(lead).get(url, {"updated_since": since}))] == [
        claim.pk
    ]
    # Reviewer B reviews the same claim: A's submit must not show through the filter.
    assert _items(api_client(reviewer_b).get(url, {"updated_since": since})) == []
    mine = _items(api_client(reviewer_a).get(url, {"updated_since": since}))
    assert [(c["id"], c["my_sheet"]) for c in mine] == [(claim.pk, "submitted")]
    submit_sheet(reviewer_b, claim, "not_supported")
    theirs = _items(api_client(reviewer_b).get(url, {"updated_since": since}))
    assert [c["id"] for c in theirs] == [claim.pk]


def test_a_lead_who_reviews_a_claim_sees_no_other_sheet_through_updated_since(
    handmade, lead, reviewer_a
):
    from audit import services

    services.review_open(audit_set=handmade, reviewers=[reviewer_a, lead], overlap=2, by=lead)
    Claim.objects.update(updated_at=timezone.now() - timedelta(hours=1))
    since = (timezone.now() - timedelta(minutes=1)).isoformat()
    submit_sheet(reviewer_a, claim_at("hm-1-a", 0), "not_supported")
    url = f"/api/v1/sets/{handmade.pk}/claims"
    assert _items(api_client(lead).get(url, {"updated_since": since})) == []


def test_a_batch_id_past_any_key_is_422_not_an_overflow(opened, lead):
    url = f"/api/v1/sets/{opened.pk}/sheets"
    response = api_client(lead).get(url, {"batch": 2**64})
    assert response.status_code == 422
    assert "batch" in response.json()["detail"]
