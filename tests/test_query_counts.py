"""Pages make a fixed number of queries, however many claims a set holds (issue: scale)."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit import services
from audit.models import Answer, Claim
from tests.conftest import FIXTURES, import_file

pytestmark = pytest.mark.django_db


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(ctx.captured_queries)


@pytest.fixture
def open_round(audit_set, lead, reviewer_a, reviewer_b):
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    return audit_set


def _grow(audit_set):
    """Import the ExpertQA slice too: 15 more answers, 110 more claims."""
    import_file(audit_set, FIXTURES / "expertqa" / "expertqa_slice15.jsonl")


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_page_queries_do_not_grow_with_the_set(lead, reviewer_a, open_round):
    claim = Claim.objects.filter(answer__external_id="hm-1-a").order_by("order").first()
    answer = Answer.objects.get(external_id="hm-1-a")
    pages_lead = [
        reverse("audit:set-list"),
        reverse("audit:set-detail", args=[open_round.pk]),
        reverse("audit:set-claims", args=[open_round.pk]),
        reverse("audit:set-progress", args=[open_round.pk]),
        reverse("audit:label-distribution", args=[open_round.pk]),
        answer.get_absolute_url(),
    ]
    review_url = reverse("audit:review-claim", args=[claim.pk])
    as_lead, as_reviewer = _client(lead), _client(reviewer_a)
    as_reviewer.get(review_url)  # the first visit creates the draft sheet
    small = {url: _queries(as_lead, url) for url in pages_lead}
    small[review_url] = _queries(as_reviewer, review_url)

    before = Claim.objects.count()
    _grow(open_round)
    assert Claim.objects.count() > 5 * before
    services.review_open(audit_set=open_round, reviewers=[reviewer_a], overlap=1, by=lead)
    large = {url: _queries(as_lead, url) for url in pages_lead}
    large[review_url] = _queries(as_reviewer, review_url)

    assert large == small
    assert max(small.values()) <= 25
