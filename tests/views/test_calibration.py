"""Calibrating reviewers: skipping a claim for later, judgment definitions beside the
choices, flags that are stored once."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit import judgments, selectors, services
from audit.models import Assignment, AuditSheet, Claim, ClaimSkip, GuidelineFlag

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _queue(reviewer, audit_set) -> list[int]:
    return list(
        selectors.review_queue(reviewer=reviewer, audit_set=audit_set).values_list(
            "claim_id", flat=True
        )
    )


# ----------------------------------------------------------------------------- skipping


def test_a_skipped_claim_comes_after_every_other_claim(client_for, opened, reviewer_a):
    first, second, third = _queue(reviewer_a, opened)[:3]
    client = client_for(reviewer_a)

    response = client.post(
        reverse("audit:review-skip", args=[first]), {"skip_reason": "Passage 2 is cut off."}
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("audit:review-claim", args=[second])
    assert selectors.next_claim_id(reviewer=reviewer_a, audit_set=opened) == second
    assert AuditSheet.objects.count() == 0
    assert list(ClaimSkip.objects.values_list("claim_id", "reason")) == [
        (first, "Passage 2 is cut off.")
    ]


def test_the_skipped_claim_returns_once_nothing_else_is_left(opened, reviewer_a):
    queue = _queue(reviewer_a, opened)
    services.claim_skip(claim=Claim.objects.get(pk=queue[0]), user=reviewer_a, reason="later")
    for claim_id in queue[1:]:
        claim = Claim.objects.get(pk=claim_id)
        sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)
        services.sheet_submit(
            sheet=sheet,
            user=reviewer_a,
            version=sheet.version,
            data=services.SheetData(judgment="unclear"),
        )

    assert selectors.next_claim_id(reviewer=reviewer_a, audit_set=opened) == queue[0]
    assert (
        selectors.next_claim_id(
            reviewer=reviewer_a, audit_set=opened, after=Claim.objects.get(pk=queue[-1])
        )
        == queue[0]
    )


def test_skipping_without_a_reason_is_refused(client_for, opened, reviewer_a):
    first = _queue(reviewer_a, opened)[0]

    response = client_for(reviewer_a).post(
        reverse("audit:review-skip", args=[first]), {"skip_reason": "  "}, follow=True
    )

    assert [str(m) for m in response.context["messages"]] == [
        "Say why you skip this claim, for the lead."
    ]
    assert ClaimSkip.objects.count() == 0


def test_a_submitted_claim_cannot_be_skipped(opened, reviewer_a):
    claim = Claim.objects.get(pk=_queue(reviewer_a, opened)[0])
    sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=1, data=services.SheetData(judgment="unclear")
    )

    with pytest.raises(services.ReviewError, match="submitted"):
        services.claim_skip(claim=claim, user=reviewer_a, reason="later")


def test_the_lead_sees_skips_on_the_progress_page(client_for, opened, reviewer_a, lead):
    claim = Claim.objects.get(pk=_queue(reviewer_a, opened)[0])
    services.claim_skip(claim=claim, user=reviewer_a, reason="Needs the table in [2].")

    body = client_for(lead).get(reverse("audit:set-progress", args=[opened.pk])).content.decode()

    rows = re.findall(r'<td class="flag-comment">([^<]*)</td>', body)
    assert 'Skipped claims <span class="muted">(1)</span>' in body
    assert rows == ["Needs the table in [2]."]


def test_a_reviewer_who_leads_too_sees_no_skip_on_a_claim_they_still_review(
    client_for, opened, reviewer_a, reviewer_b, lead
):
    claim = Claim.objects.get(pk=_queue(reviewer_a, opened)[0])
    services.claim_skip(claim=claim, user=reviewer_b, reason="I think it is contradicted.")
    opened.reviewers.add(lead)
    Assignment.objects.create(claim=claim, reviewer=lead)

    skips = selectors.set_skips(audit_set=opened, viewer=lead)

    assert claim.assignments.filter(reviewer=lead).exists()
    assert list(skips) == []


# ----------------------------------------------------------------- judgment definitions


def test_judgment_definitions_come_from_the_guidelines_list_items():
    guidelines = (
        "Intro.\n\n- *Supported*: every **part** is stated.\n"
        "- **Wrong citation** — another passage supports it.\n- Minimal evidence: fewest."
    )

    definitions = judgments.judgment_definitions(guidelines)

    assert definitions[judgments.SUPPORTED] == "every part is stated."
    assert definitions[judgments.WRONG_CITATION] == "another passage supports it."
    assert definitions[judgments.UNCLEAR] == judgments.DEFINITIONS[judgments.UNCLEAR]
    assert set(definitions) == judgments.JUDGMENT_CODES


def test_the_review_page_shows_each_definition_beside_its_choice(client_for, opened, reviewer_a):
    opened.guidelines = "- *Contradicted*: a passage says <b>otherwise</b>."
    opened.save()
    first = _queue(reviewer_a, opened)[0]

    body = client_for(reviewer_a).get(reverse("audit:review-claim", args=[first])).content.decode()

    shown = re.findall(r'<span class="judgment-def">([^<]*)</span>', body)
    assert len(shown) == 7
    assert shown[3] == "a passage says &lt;b&gt;otherwise&lt;/b&gt;."
    assert shown[0] == judgments.DEFINITIONS[judgments.SUPPORTED]
    assert f'title="{shown[3]}"' in body


# ------------------------------------------------------------------------------- flags


def test_a_raised_flag_clears_its_box_and_a_second_click_stores_no_duplicate(
    client_for, opened, reviewer_a
):
    first = _queue(reviewer_a, opened)[0]
    client = client_for(reviewer_a)
    url = reverse("audit:flag-raise", args=[first])

    one = client.post(url, {"flag_comment": "Does 'per year' count?"}, **HTMX)
    two = client.post(url, {"flag_comment": "Does 'per year' count?"}, **HTMX)

    box = re.search(r'<textarea name="flag_comment"[^>]*>(.*?)</textarea>', one.content.decode())
    assert (one.status_code, two.status_code) == (200, 200)
    assert box.group(1) == ""
    assert GuidelineFlag.objects.count() == 1


def test_a_refused_flag_keeps_what_was_typed(client_for, opened, reviewer_a):
    first = _queue(reviewer_a, opened)[0]

    response = client_for(reviewer_a).post(
        reverse("audit:flag-raise", args=[first]), {"flag_comment": "x" * 5001}, **HTMX
    )

    body = response.content.decode()
    box = re.search(r'<textarea name="flag_comment"[^>]*>(.*?)</textarea>', body)
    assert box.group(1) == "x" * 5001
    assert GuidelineFlag.objects.count() == 0
