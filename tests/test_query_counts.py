"""Pages make a fixed number of queries, however many claims a set holds."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit import services
from audit.judgments import NOT_SUPPORTED, UNCLEAR
from audit.models import Answer, Claim, Rater, RaterLabel
from tests.conftest import FIXTURES, import_file, log_in
from tests.factories import submitted_sheet

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
    return log_in(Client(), user)


def _judge(claims, reviewers, rater) -> None:
    """Both reviewers' sheets, gold on every other claim, and an automatic verdict."""
    from audit.models import Adjudication

    for i, claim in enumerate(claims):
        for reviewer, judgment in zip(reviewers, (NOT_SUPPORTED, UNCLEAR), strict=True):
            submitted_sheet(claim, reviewer, judgment if i % 3 else NOT_SUPPORTED)
        if i % 2:
            Adjudication.objects.create(claim=claim, judgment=UNCLEAR, source="edited")
        RaterLabel.objects.create(rater=rater, claim=claim, judgment=NOT_SUPPORTED)


def test_agreement_page_queries_do_not_grow_with_the_set(lead, reviewer_a, reviewer_b, open_round):
    rater = Rater.objects.create(name="judge", kind=Rater.Kind.AUTOMATIC)
    claims = list(Claim.objects.filter(answer__audit_set=open_round).order_by("pk"))
    _judge(claims[:4], [reviewer_a, reviewer_b], rater)
    board = reverse("audit:agreement", args=[open_round.pk])
    pages = [
        board,
        f"{board}?pair={reviewer_a.pk}-{reviewer_b.pk}",
        f"{board}?system={claims[0].answer.system}",
        reverse("audit:agreement-claims", args=[open_round.pk])
        + f"?which=reviewers&row={NOT_SUPPORTED}&col={UNCLEAR}",
        reverse("audit:agreement-claims", args=[open_round.pk])
        + f"?which=rater-{rater.pk}&differ=1",
    ]
    as_lead = _client(lead)
    small = {url: _queries(as_lead, url) for url in pages}

    _grow(open_round)
    more = Claim.objects.filter(answer__audit_set=open_round).order_by("pk")[4:40]
    _judge(list(more), [reviewer_a, reviewer_b], rater)
    large = {url: _queries(as_lead, url) for url in pages}

    assert large == small
    # The dashboard's own share is six aggregates (five with a pair); a cell adds its page,
    # and one for the reviewers' letters in the set.
    assert list(small.values()) == [11, 10, 11, 16, 16]


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
