"""Judgments below the sentence in a real browser: part of a passage as evidence and a
trimmed sentence, unsupported spans of the claim with a note and an accepted suggestion, by
mouse and by keyboard; a reload mid-edit keeps the draft; the lead sees both sheets' spans
and where they overlap, and keeps the ones gold needs."""

import pytest
from playwright.sync_api import expect

from audit.judgments import PARTIAL, Assertion
from audit.models import Adjudication, AuditSheet
from tests.browser.conftest import saved as _saved
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import claim_at, evidence_ref, submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CLAIM = "Full-time employees receive 25 days of paid annual leave per year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."
A_NOTE = "source says 25 days per leave year"

# Drag the mouse across `words` inside the element `selector` (its pieces carry offsets).
DRAG_POINTS = """([selector, words]) => {
    const box = document.querySelector(selector);
    box.scrollIntoView({block: "center"});
    const pieces = Array.from(box.querySelectorAll(".pt"));
    const text = pieces.map((p) => p.textContent).join("");
    const start = text.indexOf(words);
    function point(offset, end) {
        for (const p of pieces) {
            const o = Number(p.dataset.o), n = p.textContent.length;
            const inside = end ? offset <= o + n : offset < o + n;
            if (offset >= o && inside) return [p.firstChild, offset - o];
        }
    }
    const range = document.createRange();
    range.setStart(...point(start, false));
    range.setEnd(...point(start + words.length, true));
    const rects = range.getClientRects();
    const first = rects[0], last = rects[rects.length - 1];
    return {x1: first.left + 1, y1: first.top + first.height / 2,
            x2: last.right - 1, y2: last.top + last.height / 2};
}"""


def _drag_select(page, selector: str, words: str) -> None:
    at = page.evaluate(DRAG_POINTS, [selector, words])
    page.mouse.move(at["x1"], at["y1"])
    page.mouse.down()
    page.mouse.move(at["x2"], at["y2"], steps=8)
    page.mouse.up()


def _texts(page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def _at(text: str, words: str, note: str = "") -> dict:
    start = text.index(words)
    return {"text": words, "start": start, "end": start + len(words), "note": note}


def test_reviewer_marks_spans_by_mouse_and_keyboard_and_a_reload_keeps_them(
    new_page, live_server, opened, reviewer_a, reviewer_b
):
    claim = claim_at("hm-1-a", 0)
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/claims/{claim.pk}/review/")
    passage = claim.answer.passages.get(position=1).text

    # Mouse: part of a passage, added as evidence with the button.
    _drag_select(page, '.passage-text[data-passage="1"]', "25 days of paid annual leave")
    expect(page.locator("#selection-text")).to_have_text("“25 days of paid annual leave”")
    page.click("#add-selection")
    expect(page.locator('.evidence-parts[data-passage="1"] li q')).to_have_text(
        ["25 days of paid annual leave"]
    )
    expect(page.locator(".passage-text .pt.ev")).to_have_text(["25 days of paid annual leave"])

    # Keyboard: tick the part-time sentence, then trim it to four words.
    sentence = page.locator(f"label.sent:has-text('{PART_TIME}') input")
    for _ in range(12):
        page.keyboard.press("j")
        if page.evaluate("() => document.activeElement.parentElement.textContent") == PART_TIME:
            break
    expect(sentence).to_be_focused()
    page.keyboard.press("Space")
    expect(sentence).to_be_checked()
    page.keyboard.press("ArrowRight")  # "Part-time": a hyphen joins a word, never splits it
    expect(page.locator("#selection-text")).to_have_text("“Part-time”")
    for _ in range(4):  # employees, receive, the, same
        page.keyboard.press("ArrowRight")
    for _ in range(3):  # entitlement, pro, rata
        page.keyboard.press("Shift+ArrowRight")
    expect(page.locator("#selection-text")).to_have_text("“same entitlement pro rata”")
    page.keyboard.press("a")
    expect(sentence).not_to_be_checked()
    expect(page.locator('.evidence-parts[data-passage="1"] li q')).to_have_text(
        ["25 days of paid annual leave", "same entitlement pro rata"]
    )
    expect(page.locator("#evidence-count")).to_have_text("2 evidence spans selected")

    # Keyboard: "25 days" in the claim, with a note; Enter goes back to the claim.
    page.keyboard.press("c")
    expect(page.locator("#claim-statement")).to_be_focused()
    page.keyboard.press("ArrowRight")  # Full-time
    for _ in range(3):  # employees, receive, 25
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")  # days
    page.keyboard.press("a")
    expect(page.locator("#assertion-list .note-input")).to_be_focused()
    page.keyboard.type(A_NOTE + " a u s")  # shortcut letters type into the note
    page.keyboard.press("Enter")
    expect(page.locator("#claim-statement")).to_be_focused()

    # Mouse: a second span; keyboard: the matcher's suggestion ("per year") with `u`.
    _drag_select(page, "#claim-statement", "paid annual")
    page.click("#add-selection")
    page.locator("#claim-statement").focus()
    expect(page.locator("button.suggestion:visible")).to_have_text(["per year"])
    page.keyboard.press("u")
    expect(page.locator("button.suggestion:visible")).to_have_count(0)
    expect(page.locator("#assertion-list li q")).to_have_text(
        ["25 days", "paid annual", "per year"]
    )
    expect(page.locator("#claim-statement .pt.un")).to_have_text(
        ["25 days", "paid annual", "per year"]
    )
    page.keyboard.press("2")
    _saved(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    screenshot(page, "spans-review-1440")
    page.set_viewport_size({"width": 1024, "height": 800})
    screenshot(page, "spans-review-1024")

    # Mid-edit reload: remove a span and reload before the autosave could run.
    page.locator("#assertion-list li", has_text="paid annual").get_by_role("button").click()
    page.reload()
    _saved(page)
    expect(page.locator("#assertion-list li q")).to_have_text(["25 days", "per year"])
    expect(page.locator("#assertion-list .note-input").first).to_have_value(A_NOTE + " a u s")
    expect(page.locator('.evidence-parts[data-passage="1"] li q')).to_have_text(
        ["25 days of paid annual leave", "same entitlement pro rata"]
    )
    expect(page.locator("input[name=judgment][value=partially_supported]")).to_be_checked()

    # The other reviewer sees nothing of it.
    other = new_page(reviewer_b)
    other.goto(f"{live_server.url}/claims/{claim.pk}/review/")
    body = other.content()
    assert A_NOTE not in body
    assert other.locator("#claim-statement .pt.un, .passage-text .pt.ev").count() == 0
    assert other.locator("#assertion-list li").count() == 0

    page.keyboard.press("s")
    page.wait_for_url(lambda url: f"/claims/{claim.pk}/" not in url)
    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert (sheet.status, sheet.judgment) == ("submitted", PARTIAL)
    assert sheet.evidence == [
        {
            "passage": 1,
            **{
                k: v for k, v in _at(passage, "25 days of paid annual leave").items() if k != "note"
            },
        },
        {
            "passage": 1,
            **{k: v for k, v in _at(passage, "same entitlement pro rata").items() if k != "note"},
        },
    ]
    assert sheet.unsupported_assertions == [
        _at(CLAIM, "25 days", A_NOTE + " a u s"),
        _at(CLAIM, "per year"),
    ]
    assert errors == []


@pytest.fixture
def span_round(opened, reviewer_a, reviewer_b):
    """Claim 0 judged partially supported by both, with different spans."""
    claim = claim_at("hm-1-a", 0)
    passage = claim.answer.passages.get(position=1).text

    def span(words: str, note: str = "") -> Assertion:
        at = _at(CLAIM, words, note)
        return Assertion(text=words, start=at["start"], end=at["end"], note=note)

    def part(words: str):
        return evidence_ref(claim, 1, words)

    submit_sheet(
        reviewer_a,
        claim,
        PARTIAL,
        part("25 days of paid annual leave"),
        seconds=40,
        unsupported_assertions=(span("per year", "leave year, not calendar"), "<b>hostile</b>"),
    )
    submit_sheet(
        reviewer_b,
        claim,
        PARTIAL,
        part("entitled to 25 days"),
        seconds=40,
        unsupported_assertions=(span("annual leave per year", "says in each leave year"),),
    )
    return claim, passage


def test_lead_sees_both_sheets_spans_and_their_overlap_and_keeps_one(
    new_page, live_server, span_round, lead
):
    claim, passage = span_round
    page = new_page(lead)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/claims/{claim.pk}/adjudicate/")

    expect(page.locator(".sev")).to_have_text("Evidence differs")
    # Evidence: A's and B's parts, and the words both chose carry both marks.
    expect(page.locator(".adj-passage .pt.ev-a.ev-b")).to_have_text(["25 days"])
    expect(page.locator("#claim-statement .pt.un-a.un-b")).to_have_text(["per year"])
    expect(page.locator("#claim-statement .pt.un-b:not(.un-a)")).to_have_text(["annual leave "])
    expect(page.locator("#sheet-a .sheet-assertions li")).to_have_text(
        ["per year — leave year, not calendar", "free text: <b>hostile</b>"]
    )
    page.set_viewport_size({"width": 1440, "height": 900})
    screenshot(page, "spans-adjudication-1440")
    page.set_viewport_size({"width": 1024, "height": 800})
    screenshot(page, "spans-adjudication-1024")

    # Gold: B's evidence part and A's unsupported span, by keyboard.
    page.locator(".orphans label", has_text="entitled to 25 days").locator("input").check()
    page.locator(".orphans label", has_text="25 days of paid annual leave").locator(
        "input"
    ).uncheck()
    page.locator("#gold-unsupported label", has_text="leave year, not calendar").locator(
        "input"
    ).check()
    # The lead's own words: "in each leave year" of the passage and "receive" of the claim,
    # by mouse and `a`.
    _drag_select(page, '.adj-passage .passage-text[data-passage="1"]', "in each leave year")
    expect(page.locator("#selection-text")).to_have_text("“in each leave year”")
    page.keyboard.press("a")
    expect(page.locator("#gold-parts label", has_text="yours")).to_have_count(1)
    expect(page.locator("#gold-count")).to_have_text("2 in gold")
    _drag_select(page, "#claim-statement", "receive")
    page.click("#add-selection")
    page.select_option("#id_reason", "both_partly_right")
    page.click("#save-merged")
    page.wait_for_load_state("networkidle")

    gold = Adjudication.objects.get(claim=claim)
    assert gold.evidence == [
        {"passage": 1, **{k: v for k, v in _at(passage, words).items() if k != "note"}}
        for words in ("entitled to 25 days", "in each leave year")
    ]
    assert gold.unsupported_assertions == [
        _at(CLAIM, "receive"),
        _at(CLAIM, "per year", "leave year, not calendar"),
    ]
    assert errors == []
