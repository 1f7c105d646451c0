"""Suggestions on the review desk as a reviewer meets them: the set's chosen source's
pre-highlights marked with its name and score, hidden at the reviewer's wish (and still
hidden after a reload), taken with one key; none on a withheld claim; nothing of another
reviewer's sheet."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from audit import matching, suggestions
from audit.models import AuditSet, AuditSheet, Claim, Suggestion, SuggestionSource
from tests.browser.conftest import watch_errors
from tests.factories import submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path("/tmp/shots")
LABEL = "Suggested by NLI checker 2.1 · 0.82"


def _first_sentence(claim: Claim) -> tuple[int, int, int]:
    passage = claim.citations.order_by("position").first()
    start, end = matching.sentence_spans(passage.text)[0]
    return passage.position, start, end


def _push(audit_set: AuditSet, claim: Claim, lead) -> SuggestionSource:
    source = SuggestionSource.objects.create(
        audit_set=audit_set, name="NLI checker", version="2.1", created_by=lead
    )
    position, start, end = _first_sentence(claim)
    Suggestion.objects.create(
        source=source,
        claim=claim,
        judgment="partially_supported",
        judgment_score=0.91,
        evidence=[{"passage": position, "start": start, "end": end, "score": 0.82}],
    )
    AuditSet.objects.filter(pk=audit_set.pk).update(
        suggestion_source=f"source:{source.pk}", show_suggested_judgment=True
    )
    return source


def _sheet_when(claim: Claim, reviewer, ready) -> AuditSheet:
    """The reviewer's sheet once the autosave has stored what `ready` asks, or fail."""
    for _ in range(60):
        sheet = AuditSheet.objects.filter(claim=claim, reviewer=reviewer).first()
        if sheet is not None and ready(sheet):
            return sheet
        time.sleep(0.25)
    pytest.fail(f"the sheet never got there: {sheet and (sheet.judgment, sheet.evidence)}")


def test_reviewer_sees_hides_and_takes_the_chosen_sources_suggestions(
    browser, new_page, live_server, opened, claim, reviewer_a, lead
):
    _push(opened, claim, lead)
    url = f"{live_server.url}/claims/{claim.pk}/review/"
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    page.goto(url)
    tag = page.locator(".review-passage label.sent.hl .sugg-tag")
    assert tag.count() == 1
    assert tag.inner_text() == LABEL
    box = page.locator(".review-passage label.sent.hl > input.sent-toggle")
    assert box.get_attribute("aria-describedby") == tag.get_attribute("id")
    suggested = page.locator("#suggested-judgment")
    assert "Suggested: Partially supported (0.91) — NLI checker 2.1" in suggested.inner_text()

    SHOTS.mkdir(exist_ok=True)
    for width, height in ((1440, 900), (1024, 768)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SHOTS / f"review-suggestions-{width}.png"))

    page.click("#toggle-suggestions")
    assert not tag.is_visible()
    assert not suggested.is_visible()
    background = page.locator(".review-passage label.sent.hl").evaluate(
        "el => getComputedStyle(el).backgroundColor"
    )
    assert background == "rgba(0, 0, 0, 0)"
    page.reload()
    assert page.locator("#toggle-suggestions").inner_text() == "Show suggestions"
    assert not page.locator(".sugg-tag").is_visible()
    # Hidden means the keys take nothing either.
    page.locator("body").press("g")
    assert not page.locator("input[name=judgment]:checked").count()

    page.click("#toggle-suggestions")
    assert tag.is_visible()
    page.locator("body").press("e")
    page.locator("body").press("g")
    assert box.is_checked()
    assert page.locator("input[name=judgment][value=partially_supported]").is_checked()
    position, start, end = _first_sentence(claim)
    sheet = _sheet_when(claim, reviewer_a, lambda s: s.judgment and s.evidence)
    assert sheet.judgment == "partially_supported"
    assert [(e["passage"], e["start"], e["end"]) for e in sheet.evidence] == [
        (position, start, end)
    ]
    assert sheet.suggestion_source_shown.startswith("source:")
    assert sheet.suggestions_withheld is False
    assert errors == []


def test_a_claim_in_the_withheld_share_shows_no_suggestion(
    browser, new_page, live_server, opened, reviewer_a, lead
):
    AuditSet.objects.filter(pk=opened.pk).update(withhold_share=0.5, withhold_seed="fixed-seed")
    claims = Claim.objects.filter(answer__audit_set=opened).order_by("pk")
    # Ids differ from run to run (and between databases): any withheld claim that cites a
    # passage, so the source has a sentence to suggest.
    held = next(
        c
        for c in claims
        if suggestions.withheld("fixed-seed", 0.5, c.pk) and c.citations.exclude(text="").exists()
    )
    _push(opened, held, lead)
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{held.pk}/review/")
    assert page.locator("label.sent.hl").count() == 0
    assert page.locator(".sugg-tag, #suggested-judgment, #suggestions, #hints").count() == 0
    page.locator("body").press("e")
    page.locator("body").press("g")
    page.locator("body").press("1")
    sheet = _sheet_when(held, reviewer_a, lambda s: bool(s.judgment))
    assert sheet.evidence == []
    assert (sheet.suggestions_withheld, sheet.suggestion_source_shown) == (True, "")


def test_the_second_reviewers_page_holds_nothing_of_the_first_reviewers_sheet(
    browser, new_page, live_server, opened, claim, reviewer_a, reviewer_b, lead
):
    _push(opened, claim, lead)
    submit_sheet(reviewer_a, claim, "not_supported", notes="Only rev_a wrote this note")
    page = new_page(reviewer_b)
    page.goto(f"{live_server.url}/claims/{claim.pk}/review/")
    assert page.locator(".sugg-tag").inner_text() == LABEL
    html = page.content()
    assert "Only rev_a wrote this note" not in html
    assert "rev_a" not in html


def test_e_takes_a_sources_spans_as_it_marked_them_a_part_of_a_sentence_as_a_part(
    browser, new_page, live_server, opened, claim, reviewer_a, lead
):
    source = _push(opened, claim, lead)
    passage = claim.citations.order_by("position").first()
    spans = matching.sentence_spans(passage.text)
    # A sentence long enough to take words out of, and another one.
    (first_start, first_end) = next((a, b) for a, b in spans if b - a > 20)
    (second_start, second_end) = next(span for span in spans if span[0] != first_start)
    # Words inside the first sentence, and the whole second one.
    part = (first_start + 4, first_end - 6)
    Suggestion.objects.filter(source=source, claim=claim).update(
        evidence=[
            {"passage": passage.position, "start": part[0], "end": part[1], "score": 0.9},
            {"passage": passage.position, "start": second_start, "end": second_end, "score": 0.5},
        ]
    )
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/claims/{claim.pk}/review/")

    page.locator("body").press("e")

    sheet = _sheet_when(claim, reviewer_a, lambda s: len(s.evidence) == 2)
    assert sorted((e["passage"], e["start"], e["end"]) for e in sheet.evidence) == sorted(
        [(passage.position, *part), (passage.position, second_start, second_end)]
    )
    # The part is listed as a part under its passage, the whole sentence ticked.
    assert page.locator(".evidence-parts li").count() == 1
    box = f'.passage-text[data-passage="{passage.position}"]'
    assert page.locator(f'{box} label.sent[data-start="{second_start}"] > input').is_checked()
    assert not page.locator(f'{box} label.sent[data-start="{first_start}"] > input').is_checked()
    # Taken again, nothing is added twice.
    page.locator("body").press("e")
    time.sleep(0.5)
    assert len(_sheet_when(claim, reviewer_a, lambda s: True).evidence) == 2
    assert errors == []
