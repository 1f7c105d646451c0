"""Calibrating reviewers in a real browser: skipping a claim, judgment definitions beside
the choices, a flag raised once, a sticky judgment panel beside a page that scrolls, and
the feedback page, which says nothing before a claim is adjudicated."""

from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from audit import services
from audit.models import AuditSheet, Claim, ClaimSkip, GuidelineFlag
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTE = "LEAD-NOTE-7731: section 4 says twenty days."


def _watch_bodies(page) -> list[str]:
    bodies: list[str] = []

    def keep(response) -> None:
        if "text/html" in (response.headers.get("content-type") or ""):
            with contextlib.suppress(PlaywrightError):
                bodies.append(response.text())

    page.on("response", keep)
    return bodies


def _first() -> Claim:
    return Claim.objects.get(answer__external_id="hm-1-a", order=0)


def _shoot(page, name: str) -> None:
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"{name}-{width}")


def test_a_reviewer_skips_a_claim_and_flags_it_once(new_page, live_server, opened, reviewer_a):
    first = _first()
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")

    # Definitions are visible text beside each choice.
    expect(page.locator("label.judgment .judgment-def")).to_have_count(7)
    expect(page.locator("label.judgment").nth(3)).to_contain_text("says otherwise")
    # The judgment panel stays in view while the page scrolls past long passages.
    page.set_viewport_size({"width": 1440, "height": 500})
    panel = page.evaluate(
        """() => {
            const side = document.querySelector('.review-side');
            const start = Math.round(side.getBoundingClientRect().top + window.scrollY);
            window.scrollTo(0, start + 40);
            return {start: start, scrolled: window.scrollY,
                    top: side.getBoundingClientRect().top};
        }"""
    )
    assert (panel["scrolled"], panel["top"]) == (panel["start"] + 40, 8)
    nested = page.evaluate(
        """() => Array.from(document.querySelectorAll('.review-main *')).filter(e => {
            const s = getComputedStyle(e);
            return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1;
        }).length"""
    )
    assert nested == 0
    page.evaluate("() => window.scrollTo(0, 0)")

    page.click("text=Flag for guideline update")
    page.fill("#id_flag_comment", "Does 'per year' need its own evidence?")
    page.click("text=Flag for the lead")
    expect(page.locator(".my-flags li")).to_have_count(1)
    expect(page.locator("#id_flag_comment")).to_have_value("")
    page.click("text=Flag for the lead")
    expect(page.locator("#flag-status .error")).to_have_text(
        "Say what the guidelines should settle."
    )
    _shoot(page, "calib-review")

    page.click("text=Skip for now")
    page.fill("#id_skip_reason", "Passage 2 is cut off.")
    page.click("#skip-claim")
    page.wait_for_load_state("networkidle")

    assert page.url != f"{live_server.url}/claims/{first.pk}/review/"
    expect(page.locator(".messages")).to_contain_text("Skipped")
    assert GuidelineFlag.objects.count() == 1
    assert list(ClaimSkip.objects.values_list("claim_id", "reason")) == [
        (first.pk, "Passage 2 is cut off.")
    ]
    # Only looked at, flagged and skipped: no sheet stored.
    assert AuditSheet.objects.filter(claim=first).count() == 0
    assert errors == []


def test_the_feedback_page_is_blind_until_gold_is_decided(
    new_page, live_server, opened, reviewer_a, reviewer_b, lead
):
    first = _first()
    page = new_page(reviewer_a)
    bodies = _watch_bodies(page)
    submit_sheet(reviewer_a, first, "not_supported")

    page.goto(f"{live_server.url}/feedback/")
    expect(page.locator("#feedback-counts")).to_have_text(
        "0 of your 0 adjudicated sheets differ from gold."
    )
    b = submit_sheet(reviewer_b, first, "unclear")
    page.reload()
    expect(page.locator("#feedback-counts")).to_have_text(
        "0 of your 0 adjudicated sheets differ from gold."
    )
    assert not any(NOTE in body or "Unclear" in body for body in bodies)

    services.adjudication_save(
        claim=first, lead=lead, version=0, take=b.pk, reason="reviewer_error", note=NOTE
    )
    page.reload()

    expect(page.locator("#feedback-counts")).to_have_text(
        "1 of your 1 adjudicated sheet differs from gold."
    )
    expect(page.locator(".gold-note")).to_have_text(NOTE)
    _shoot(page, "calib-feedback")

    lead_page = new_page(lead)
    services.claim_skip(
        claim=Claim.objects.get(answer__external_id="hm-1-a", order=1),
        user=reviewer_b,
        reason="Needs the table in [2].",
    )
    lead_page.goto(f"{live_server.url}/sets/{opened.pk}/progress/")
    expect(lead_page.locator(".skips-table td.flag-comment")).to_have_text(
        "Needs the table in [2]."
    )
    _shoot(lead_page, "calib-progress")
