"""Labels a lead can trust, in a real browser: another reviewer's split never discards a
submitted sheet, and the page after submitting says the same whatever the other reviewer
did."""

from __future__ import annotations

import re

import pytest

from audit import services
from audit.models import AuditSheet, Claim
from audit.services.splits import REVIEWER_SPLIT_REFUSED
from tests.browser.conftest import screenshot
from tests.factories import claim_at

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def opened(handmade, reviewer_a, reviewer_b, lead):
    services.review_open(
        audit_set=handmade,
        reviewers=[reviewer_a, reviewer_b],
        overlap=2,
        by=lead,
        allow_reviewer_split=True,
    )
    return handmade


def _judge_and_submit(page, url: str, key: str) -> None:
    """Open the claim, press a judgment key, wait for the draft to save, press `s`."""
    page.goto(url)
    page.wait_for_selector("#sheet-form")
    page.keyboard.press(key)
    page.wait_for_selector("#save-status[data-state=saved]")
    page.keyboard.press("s")
    page.wait_for_url(lambda current: current != url)


def _panel(page) -> str:
    """The submitted sheet's status line and buttons as a person reads them, times blanked."""
    text = page.inner_text("#save-status .save-message") + " | " + page.inner_text("div.actions")
    return re.sub(r"\d", "N", " ".join(text.split()))


def test_another_reviewers_split_never_discards_a_submitted_sheet(
    new_page, live_server, opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 0)
    url = f"{live_server.url}/claims/{claim.pk}/review/"
    page_a = new_page(reviewer_a)
    page_b = new_page(reviewer_b)

    _judge_and_submit(page_a, url, "3")
    page_b.goto(url)
    page_b.click("text=Split into atomic facts…")
    page_b.fill("textarea[name=parts]", "Full-time staff get 25 days.\nThe days are paid.")
    page_b.click("button:has-text('Split')")
    refusal = page_b.inner_text("ul.errorlist.nonfield")
    screenshot(page_b, "split-refused")

    page_a.goto(url)
    a_sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert refusal == REVIEWER_SPLIT_REFUSED
    assert Claim.objects.filter(parent=claim).count() == 0
    assert (a_sheet.status, a_sheet.judgment) == ("submitted", "not_supported")
    assert page_a.locator("#reopen-sheet").inner_text() == "Reopen to change"

    # A lead's split keeps A's sheet, and A's old address says where the parts are.
    page_lead = new_page(lead)
    page_lead.goto(f"{live_server.url}/claims/{claim.pk}/split/")
    page_lead.fill("textarea[name=parts]", "Full-time staff get 25 days.\nThe days are paid.")
    page_lead.click("button:has-text('Split')")
    page_lead.wait_for_url(f"{live_server.url}/sets/{opened.pk}/claims/")
    page_a.goto(url)
    screenshot(page_a, "split-notice")
    parts = page_a.locator("#split-parts a").all_inner_texts()
    page_a.click("text=Full-time staff get 25 days.")
    child = Claim.objects.get(parent=claim, order=0)
    page_a.wait_for_url(f"{live_server.url}/claims/{child.pk}/review/")
    page_a.goto(f"{live_server.url}/")
    listed = page_a.locator("ul.split-claims a").all_inner_texts()
    history = new_page(lead)
    history.goto(f"{live_server.url}/claims/{claim.pk}/history/")

    a_sheet.refresh_from_db()
    assert (a_sheet.claim_id, a_sheet.status) == (claim.pk, "submitted")
    assert parts == ["Full-time staff get 25 days.", "The days are paid."]
    assert listed == [claim.text]
    assert history.locator("h2:has-text('rev_a')").count() == 1


def test_the_page_after_submitting_is_the_same_whatever_the_other_reviewer_did(
    new_page, live_server, opened, reviewer_a, reviewer_b
):
    agreed, disagreed, alone = claim_at("hm-1-a", 1), claim_at("hm-1-a", 2), claim_at("hm-1-a", 3)
    page_a = new_page(reviewer_a)
    page_b = new_page(reviewer_b)
    _judge_and_submit(page_a, f"{live_server.url}/claims/{agreed.pk}/review/", "3")
    _judge_and_submit(page_a, f"{live_server.url}/claims/{disagreed.pk}/review/", "4")

    panels = []
    for claim in (agreed, disagreed, alone):
        url = f"{live_server.url}/claims/{claim.pk}/review/"
        _judge_and_submit(page_b, url, "3")
        page_b.goto(url)
        panels.append(_panel(page_b))
    screenshot(page_b, "after-submit-panel")

    assert panels == [panels[0]] * 3
    assert panels[0] == "Submitted NNNN-NN-NN NN:NN. | Reopen to change Next n Flag…"
