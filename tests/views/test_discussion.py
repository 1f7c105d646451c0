"""A claim's discussion: Markdown comments between a lead and the claim's reviewers, read
by a reviewer only once their own sheet is in; leads settle guideline flags."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import services
from audit.models import ClaimComment, GuidelineFlag
from tests.factories import submit_sheet

pytestmark = pytest.mark.django_db

SECRET = "B-THINKS-CONTRADICTED-5521"


def _page(client, claim) -> str:
    return client.get(reverse("audit:review-claim", args=[claim.pk])).content.decode()


def test_a_reviewer_reads_the_thread_only_after_submitting(
    client_for, opened, claim, reviewer_a, reviewer_b
):
    submit_sheet(reviewer_b, claim, "contradicted")
    client_b = client_for(reviewer_b)
    posted = client_b.post(reverse("audit:comment-create", args=[claim.pk]), {"body": SECRET})

    page_a = _page(client_for(reviewer_a), claim)
    refused = client_for(reviewer_a).post(
        reverse("audit:comment-create", args=[claim.pk]), {"body": "Me too"}, follow=True
    )
    submit_sheet(reviewer_a, claim, "not_supported")
    page_a_after = _page(client_for(reviewer_a), claim)

    assert posted.status_code == 302
    assert SECRET not in page_a
    assert 'id="discussion"' not in page_a
    assert [str(m) for m in refused.context["messages"]] == [
        "Submit your own sheet before joining the discussion."
    ]
    assert ClaimComment.objects.count() == 1
    assert SECRET in page_a_after


def test_comments_are_sanitised_markdown_with_mentions(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    body = (
        "**Bold** <script>alert(1)</script> [x](javascript:alert(1)) "
        "@rev_a and @nobody and mail@rev_a"
    )
    services.comment_post(claim=claim, user=lead, body=body)
    submit_sheet(reviewer_a, claim, "not_supported")

    page = _page(client_for(reviewer_a), claim)

    assert "<strong>Bold</strong>" in page
    assert "<script>alert" not in page
    assert "javascript:" not in page
    assert '<strong class="mention">@rev_a</strong>' in page
    assert "@nobody" in page and '<strong class="mention">@nobody' not in page
    assert "mail@rev_a" in page


def test_a_lead_settles_a_flag_and_opens_it_as_a_thread(
    client_for, opened, claim, reviewer_a, reviewer_b, lead
):
    flag = services.guideline_flag_raise(claim=claim, user=reviewer_a, comment="Is per year X?")
    client = client_for(lead)
    url = reverse("audit:flag-settle", args=[opened.pk])

    client.post(url, {"flag": flag.pk, "action": "dismiss"})
    flag.refresh_from_db()
    dismissed = (flag.status, flag.settled_by)
    client.post(url, {"flag": flag.pk, "action": "resolve"})
    flag.refresh_from_db()
    resolved = flag.status
    opened_thread = client.post(url, {"flag": flag.pk, "action": "discuss"})
    client.post(url, {"flag": flag.pk, "action": "discuss"})

    comment = ClaimComment.objects.get()
    assert dismissed == ("dismissed", lead)
    assert resolved == "resolved"
    assert opened_thread["Location"].endswith(f"/claims/{claim.pk}/adjudicate/#discussion")
    assert (comment.from_flag, comment.author) == (flag, lead)
    assert comment.body == "> Is per year X?\n\nFlagged by @rev_a."
    assert GuidelineFlag.objects.count() == 1


def test_a_reviewer_cannot_settle_flags(client_for, opened, claim, reviewer_a):
    flag = services.guideline_flag_raise(claim=claim, user=reviewer_a, comment="Unclear rule")

    response = client_for(reviewer_a).post(
        reverse("audit:flag-settle", args=[opened.pk]), {"flag": flag.pk, "action": "dismiss"}
    )

    flag.refresh_from_db()
    assert (response.status_code, flag.status) == (403, "open")
