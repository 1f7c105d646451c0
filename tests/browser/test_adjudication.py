"""A lead resolves every disagreement of a small demo round in a real browser: Take A,
Take B and an edited version, one of them by keyboard only; the queue ends empty and the
dashboard shows the round."""

import json
from functools import partial

import pytest
from playwright.sync_api import expect

from audit import services
from audit.judgments import CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED, UNCLEAR
from audit.models import Adjudication, GuidelineFlag
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import claim_at, evidence_ref, submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."


# Long enough not to be flagged as a fast sheet, unless a test says otherwise.
_submit = partial(submit_sheet, seconds=45)


@pytest.fixture
def demo_round(handmade, reviewer_a, reviewer_b, lead):
    """Five finished claims: one unanimous, three disagreements, one to confirm."""
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    c0, c1, c2, c3 = (claim_at("hm-1-a", n) for n in range(4))
    n0 = claim_at("hm-2-a", 0)
    _submit(reviewer_a, c0, SUPPORTED, evidence_ref(c0, 1, FULL_TIME), notes="Exactly 25 days.")
    _submit(reviewer_b, c0, CONTRADICTED, seconds=1, notes="Says per leave year, not per year.")
    _submit(reviewer_a, c1, SUPPORTED, evidence_ref(c1, 1, PART_TIME))
    _submit(reviewer_b, c1, PARTIAL, evidence_ref(c1, 1, PART_TIME), evidence_ref(c1, 1, FULL_TIME))
    _submit(reviewer_a, c2, NOT_SUPPORTED)
    _submit(reviewer_b, c2, NOT_SUPPORTED)
    _submit(reviewer_a, c3, PARTIAL, evidence_ref(c3, 1, FULL_TIME))
    _submit(reviewer_b, c3, PARTIAL, evidence_ref(c3, 1, FULL_TIME), evidence_ref(c3, 1, PART_TIME))
    _submit(reviewer_a, n0, NOT_SUPPORTED)
    _submit(reviewer_b, n0, UNCLEAR, notes="“4 weeks” vs “four weeks”?")
    return {"c0": c0, "c1": c1, "c2": c2, "c3": c3, "n0": n0}


def test_lead_resolves_every_disagreement_of_the_round(
    new_page, live_server, demo_round, lead, tmp_path
):
    c0, c1, c3, n0 = (demo_round[k] for k in ("c0", "c1", "c3", "n0"))
    page = new_page(lead)
    errors = watch_errors(page)
    audit_set_pk = c0.answer.audit_set_id

    page.goto(f"{live_server.url}/sets/{audit_set_pk}/adjudication/")
    expect(page.locator("#results tbody tr")).to_have_count(4)
    screenshot(page, "adjudication-queue")
    page.locator("#results tbody tr").first.get_by_role("link", name="Adjudicate").click()

    # Contradicted vs supported comes first. Take A, with a reason, by keyboard only.
    page.wait_for_url(f"{live_server.url}/claims/{c0.pk}/adjudicate/")
    expect(page.locator(".sev")).to_have_text("Contradicted vs supported")
    page.check("#show-hints")
    screenshot(page, "adjudication-view")
    page.focus("#id_reason")
    page.keyboard.press("ArrowDown")  # "Reviewer error"
    page.focus("#id_note")
    page.keyboard.type("B read “per leave year” as a different period.")
    page.focus("#take-a")
    page.keyboard.press("Enter")

    # Judgments differ: an edited version, partial support on the part-time sentence only.
    page.wait_for_url(f"{live_server.url}/claims/{c1.pk}/adjudicate/")
    expect(page.locator(".messages li").first).to_contain_text("Gold saved (Supported)")
    full = page.locator(f"label.gold-sent:has-text('{FULL_TIME}')")
    part = page.locator(f"label.gold-sent:has-text('{PART_TIME}')")
    # Gold starts from what both chose: the part-time sentence, not B's full-time one.
    expect(full.locator("input")).not_to_be_checked()
    expect(part.locator("input")).to_be_checked()
    expect(page.locator("#gold-count")).to_have_text("1 in gold")
    screenshot(page, "adjudication-view-edit")
    page.check("input[name=judgment][value=partially_supported]")
    page.select_option("#id_reason", "both_partly_right")
    page.check("#id_flag")
    page.fill("#id_flag_comment", "Is pro rata partial support?")
    page.click("#save-merged")

    # Different judgments again: take B.
    page.wait_for_url(f"{live_server.url}/claims/{n0.pk}/adjudicate/")
    page.select_option("#id_reason", "ambiguous_source")
    page.click("#take-b")

    # They agree, not identically: confirm B's wider evidence, no reason needed.
    page.wait_for_url(f"{live_server.url}/claims/{c3.pk}/adjudicate/")
    expect(page.locator(".sev")).to_have_text("Agree: confirm")
    page.click("#take-b")

    page.wait_for_url(f"{live_server.url}/sets/{audit_set_pk}/adjudication/")
    expect(page.locator(".messages li").first).to_have_text(
        "Gold saved (Partially supported). The queue is empty."
    )
    expect(page.locator("#results tbody tr")).to_have_count(1)  # the empty-table row
    assert page.inner_text(".queue-count") == "0 claims waiting."

    golds = {
        g.claim_id: (g.source, g.judgment, g.from_sheet.reviewer.username if g.from_sheet else "")
        for g in Adjudication.objects.select_related("from_sheet__reviewer")
    }
    assert golds == {
        c0.pk: ("sheet", SUPPORTED, "rev_a"),
        c1.pk: ("edited", PARTIAL, ""),
        demo_round["c2"].pk: ("unanimous", NOT_SUPPORTED, ""),
        c3.pk: ("sheet", PARTIAL, "rev_b"),
        n0.pk: ("sheet", UNCLEAR, "rev_b"),
    }
    edited = Adjudication.objects.get(claim=c1)
    assert [e["text"] for e in edited.evidence] == [PART_TIME]
    assert Adjudication.objects.get(claim=c0).note == (
        "B read “per leave year” as a different period."
    )
    assert Adjudication.objects.get(claim=c0).reason == "reviewer_error"
    assert list(GuidelineFlag.objects.values_list("comment", flat=True)) == [
        "Is pro rata partial support?"
    ]

    page.goto(f"{live_server.url}/claims/{c0.pk}/history/")
    screenshot(page, "adjudication-history")
    expect(page.locator(".history-track h2")).to_have_count(3)

    # An automatic judge's verdicts, uploaded, then held against the new gold.
    verdicts = tmp_path / "judge.jsonl"
    verdicts.write_text(
        "".join(
            json.dumps({"judge": "nli-v1", "answer_id": a, "claim_index": i, "judgment": j}) + "\n"
            for a, i, j in [
                ("hm-1-a", 0, SUPPORTED),
                ("hm-1-a", 1, SUPPORTED),
                ("hm-1-a", 2, NOT_SUPPORTED),
                ("hm-1-a", 3, PARTIAL),
                ("hm-2-a", 0, NOT_SUPPORTED),
            ]
        )
    )
    page.goto(f"{live_server.url}/sets/{audit_set_pk}/verdicts/")
    page.set_input_files("input[name=file]", str(verdicts))
    page.click("form.stack button[type=submit]")
    expect(page.locator(".ok-box")).to_contain_text("Imported verdicts of nli-v1.")

    page.goto(f"{live_server.url}/sets/{audit_set_pk}/agreement/")
    screenshot(page, "agreement-dashboard")
    expect(page.locator("#kappas tbody tr")).to_have_count(1)
    expect(page.locator(".rater-card .differ-link")).to_have_text(
        "2 claims where nli-v1 differs from gold"
    )
    page.locator(".heatmap a.hm-link").first.click()
    expect(page.locator("h1")).to_contain_text("Sheet A: Supported")
    assert errors == []


def test_lead_overrides_the_number_check_and_the_report_lists_it(
    new_page, live_server, handmade, reviewer_a, reviewer_b, lead
):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    services.criteria_update(
        audit_set=handmade, criteria=[{"kind": "numbers_grounded", "only_supported": True}], by=lead
    )
    claim = claim_at("hm-2-a", 0)  # "4 weeks' notice"; the passage says "four weeks'"
    resign = "An employee who wishes to resign must give four weeks' written notice"
    _submit(reviewer_a, claim, SUPPORTED, evidence_ref(claim, 1, resign + " to Human Resources."))
    _submit(reviewer_b, claim, UNCLEAR, notes="“4 weeks” vs “four weeks”?")
    page = new_page(lead)
    errors = watch_errors(page)

    page.goto(f"{live_server.url}/claims/{claim.pk}/adjudicate/")
    expect(page.locator(".number-override .num-token.ungrounded")).to_have_text("4 ✗")
    page.check("input[name=judgment][value=supported]")
    page.locator("label.gold-sent", has_text=resign).click()
    page.select_option("#id_reason", "ambiguous_source")
    page.focus("#id_numbers_overridden")
    page.keyboard.press("Space")
    page.click("#save-merged")
    # No reason yet: refused, and the tick is kept.
    expect(page.locator("#adjudication-problems")).to_contain_text(
        "Say why the number check is overridden."
    )
    expect(page.locator("#id_numbers_overridden")).to_be_checked()
    page.focus("#id_numbers_override_reason")
    page.keyboard.type("[1] says “four weeks”.")
    screenshot(page, "adjudication-number-override")
    page.click("#save-merged")
    expect(page.locator(".messages li").first).to_contain_text("Gold saved (Supported)")

    gold = Adjudication.objects.get(claim=claim)
    assert (gold.numbers_overridden, gold.numbers_override_reason) == (
        True,
        "[1] says “four weeks”.",
    )
    page.goto(f"{live_server.url}/sets/{handmade.pk}/report/")
    expect(page.locator(".overrides-table tbody tr")).to_have_count(1)
    expect(page.locator(".overrides-table tbody td").nth(3)).to_have_text("[1] says “four weeks”.")
    expect(page.locator(".release-card").first.locator(".criteria-results li")).to_contain_text(
        "Number check overridden by a lead for 1 claim."
    )
    screenshot(page, "report-number-override")
    # The refused save's 400 is the only console error.
    assert errors == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]


def leave_the_fields(page):
    """Tab from the reason past the note to the flag's checkbox, where keys act again."""
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_flag"


def test_a_lead_clears_the_whole_queue_with_the_keyboard_only(
    new_page, live_server, demo_round, lead
):
    """No mouse: each claim's gold by its keys (Shift+A/B take a sheet, 1–7 and j/space then
    s save an edited version), the shortcut list with ?, and Enter on a judgment saves
    nothing."""
    c0, c1, c3, n0 = (demo_round[k] for k in ("c0", "c1", "c3", "n0"))
    page = new_page(lead)
    errors = watch_errors(page)
    audit_set_pk = c0.answer.audit_set_id
    page.goto(f"{live_server.url}/claims/{c0.pk}/adjudicate/")

    # ? opens the list of keys and closes it again.
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    expect(page.locator("#shortcuts")).to_contain_text("take sheet A, B, … whole as gold")
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_hidden()

    # 3 chooses the third judgment; Enter on it must not save through the first "Take".
    page.keyboard.press("3")
    expect(page.locator("input[name=judgment][value=not_supported]")).to_be_checked()
    page.keyboard.press("Enter")
    assert page.url.endswith(f"/claims/{c0.pk}/adjudicate/")
    assert not Adjudication.objects.filter(claim=c0).exists()

    # h shows the matcher's highlights, and hides them.
    page.keyboard.press("h")
    expect(page.locator("#show-hints")).to_be_checked()
    page.keyboard.press("h")
    expect(page.locator("#show-hints")).not_to_be_checked()

    # A reason is needed (they disagreed): chosen in the focused select, which is then left;
    # Shift+A takes sheet A.
    page.focus("#id_reason")
    page.keyboard.press("ArrowDown")
    leave_the_fields(page)
    page.keyboard.press("Shift+A")
    page.wait_for_url(f"{live_server.url}/claims/{c1.pk}/adjudicate/")

    # An edited version: partially supported (2), the full-time sentence added with j and
    # space, a reason, then s.
    page.keyboard.press("2")
    expect(page.locator("input[name=judgment][value=partially_supported]")).to_be_checked()
    full = page.locator(f"label.gold-sent:has-text('{FULL_TIME}') input")
    expect(full).not_to_be_checked()
    for _ in range(10):
        page.keyboard.press("j")
        if full.evaluate("el => el === document.activeElement"):
            break
    page.keyboard.press("Space")
    expect(full).to_be_checked()
    expect(page.locator("#gold-count")).to_have_text("2 in gold")
    page.focus("#id_reason")
    for _ in range(4):  # "both partly right" is the fourth reason, after "—"
        page.keyboard.press("ArrowDown")
    expect(page.locator("#id_reason")).to_have_value("both_partly_right")
    leave_the_fields(page)
    page.keyboard.press("s")
    page.wait_for_url(f"{live_server.url}/claims/{n0.pk}/adjudicate/")

    page.focus("#id_reason")
    page.keyboard.type("Ambiguous")  # a select's own type-ahead
    expect(page.locator("#id_reason")).to_have_value("ambiguous_source")
    leave_the_fields(page)
    page.keyboard.press("Shift+B")
    page.wait_for_url(f"{live_server.url}/claims/{c3.pk}/adjudicate/")
    page.keyboard.press("Shift+B")
    page.wait_for_url(f"{live_server.url}/sets/{audit_set_pk}/adjudication/")

    golds = {
        g.claim_id: (g.source, g.judgment, g.from_sheet.reviewer.username if g.from_sheet else "")
        for g in Adjudication.objects.select_related("from_sheet__reviewer")
    }
    assert golds == {
        c0.pk: ("sheet", SUPPORTED, "rev_a"),
        c1.pk: ("edited", PARTIAL, ""),
        demo_round["c2"].pk: ("unanimous", NOT_SUPPORTED, ""),
        c3.pk: ("sheet", PARTIAL, "rev_b"),
        n0.pk: ("sheet", UNCLEAR, "rev_b"),
    }
    assert sorted(e["text"] for e in Adjudication.objects.get(claim=c1).evidence) == sorted(
        [FULL_TIME, PART_TIME]
    )
    assert errors == []
