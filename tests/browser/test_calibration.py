"""Calibrating reviewers in a real browser: skipping a claim, judgment definitions beside
the choices, a flag raised once, a sticky judgment panel beside a page that scrolls, the
feedback page, which says nothing before a claim is adjudicated, a control claim no
reviewer can tell from any other, and guidelines with versions."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from audit import services
from audit.models import (
    Assignment,
    AuditSheet,
    Claim,
    ClaimSkip,
    ControlAssignment,
    GuidelineFlag,
    SheetFact,
)
from tests.browser.conftest import screenshot, watch_bodies, watch_errors
from tests.factories import UserFactory, submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTE = "LEAD-NOTE-7731: section 4 says twenty days."


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
    # Even in a short window the page holds still: each column scrolls on its own, one box
    # each, and the bar with Submit, Skip and Flag stays in view at the panel's foot.
    page.set_viewport_size({"width": 1440, "height": 500})
    layout = page.evaluate(
        """() => {
            const main = document.querySelector('.review-main');
            const side = document.querySelector('.review-side');
            main.scrollTop = main.scrollHeight;
            side.scrollTop = 0;
            const scrolls = (root) => Array.from(root.querySelectorAll('*')).filter(e => {
                const s = getComputedStyle(e);
                return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1;
            }).length;
            const bar = document.querySelector('.review-bar').getBoundingClientRect();
            return {page: document.documentElement.scrollHeight - window.innerHeight,
                    mainScrolls: main.scrollHeight > main.clientHeight,
                    nested: scrolls(main) + scrolls(side),
                    barInView: bar.top >= 0 && bar.bottom <= window.innerHeight};
        }"""
    )
    assert layout == {"page": 0, "mainScrolls": True, "nested": 0, "barInView": True}
    page.set_viewport_size({"width": 1440, "height": 900})

    page.click("button[data-open=flag-box]")  # "Flag…" in the bar opens the box below it
    expect(page.locator("#id_flag_comment")).to_be_focused()
    page.fill("#id_flag_comment", "Does 'per year' need its own evidence?")
    page.click("text=Flag for the lead")
    expect(page.locator(".my-flags li")).to_have_count(1)
    expect(page.locator("#id_flag_comment")).to_have_value("")
    page.click("text=Flag for the lead")
    expect(page.locator("#flag-status .error")).to_have_text(
        "Say what the guidelines should settle."
    )
    _shoot(page, "calib-review")

    page.click("button[data-open=skip-box]")
    expect(page.locator("#id_skip_reason")).to_be_focused()
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
    bodies = watch_bodies(page)
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


def _page_html(page) -> str:
    """The document as the reviewer's browser holds it, less tokens and the user's name."""
    html = page.content()
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    html = re.sub(r'"x-csrftoken": "[^"]+"', "", html)
    html = re.sub(r"&quot;x-csrftoken&quot;: &quot;[^&]+&quot;", "", html)
    html = re.sub(r'name="opened" value="[^"]+"', "", html)
    html = re.sub(r'nonce="[^"]+"', "", html)
    return re.sub(r"rev_[rk]", "USER", html)


def test_a_reviewer_cannot_tell_a_control_from_a_claim(
    new_page, live_server, opened, reviewer_a, reviewer_b, lead
):
    first = _first()
    submit_sheet(reviewer_a, first, "not_supported")
    b = submit_sheet(reviewer_b, first, "unclear")
    services.adjudication_save(claim=first, lead=lead, version=0, take=b.pk, reason="other")
    services.controls_mark(audit_set=opened, claim_ids=[first.pk], by=lead)
    regular = UserFactory(username="rev_r", role="reviewer")
    checked = UserFactory(username="rev_k", role="reviewer")
    opened.reviewers.add(regular, checked)
    Assignment.objects.create(claim=first, reviewer=regular)
    services.claims_changed(claim_ids=[first.pk], reviewer_ids=[regular.pk])
    ControlAssignment.objects.create(claim=first, reviewer=checked)
    before = sorted(SheetFact.objects.values_list("claim_id", "reviewer_id", "judgment"))
    page_r, page_k = new_page(regular), new_page(checked)
    errors = watch_errors(page_k)

    for page in (page_r, page_k):
        page.goto(f"{live_server.url}/")
        page.click("text=Continue")
        page.wait_for_load_state("networkidle")
    assert page_k.url == f"{live_server.url}/claims/{first.pk}/review/"
    assert _page_html(page_k) == _page_html(page_r)

    page_k.click("label.judgment:has-text('Contradicted')")
    page_k.click("#submit-sheet")
    page_k.wait_for_load_state("networkidle")

    expect(page_k.locator(".messages")).to_contain_text("Submitted")
    assert AuditSheet.objects.get(claim=first, reviewer=checked).status == "submitted"
    assert sorted(SheetFact.objects.values_list("claim_id", "reviewer_id", "judgment")) == before
    assert errors == []
    lead_page = new_page(lead)
    lead_page.goto(f"{live_server.url}/sets/{opened.pk}/calibration/")
    expect(lead_page.locator(f"#calibration-{checked.pk} td").nth(1)).to_have_text("1")
    _shoot(lead_page, "calib-calibration")


def test_a_lead_edits_the_guidelines_and_sheets_record_the_version(
    new_page, live_server, opened, reviewer_a, reviewer_b, lead
):
    first = _first()
    lead_page = new_page(lead)
    lead_page.goto(f"{live_server.url}/sets/{opened.pk}/guidelines/")
    lead_page.click("text=Edit the set and its guidelines")
    lead_page.fill("#id_guidelines", "Judge only the cited passages.\n- *Unclear*: too vague.")
    lead_page.fill("#id_change_note", "Define unclear.")
    lead_page.click("#set-edit-form button[type=submit]")
    expect(lead_page.locator(".messages")).to_contain_text("version 2")
    _shoot(lead_page, "calib-set-edit")

    reviewer_page = new_page(reviewer_a)
    reviewer_page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    expect(reviewer_page.locator("label.judgment").nth(6)).to_contain_text("too vague.")
    reviewer_page.goto(f"{live_server.url}/sets/{opened.pk}/guidelines/")
    expect(reviewer_page.locator("tr.diff-added .diff-text").first).to_have_text(
        "Judge only the cited passages."
    )
    expect(reviewer_page.locator(".change-note")).to_have_text("Define unclear.")
    _shoot(reviewer_page, "calib-guidelines")

    submit_sheet(reviewer_a, first, "not_supported")
    submit_sheet(reviewer_b, first, "unclear")
    lead_page.goto(f"{live_server.url}/claims/{first.pk}/adjudicate/")
    expect(lead_page.locator("dd.sheet-guidelines")).to_have_text(["version 2", "version 2"])
    lead_page.goto(f"{live_server.url}/sets/{opened.pk}/agreement/")
    lead_page.click("#split-by-version")
    expect(lead_page.locator("#by-version tbody tr")).to_have_count(1)
    expect(lead_page.locator("#by-version tbody td").first).to_have_text("version 2")


def test_a_comment_reaches_a_reviewer_only_after_their_own_submit(
    new_page, live_server, opened, reviewer_a, reviewer_b
):
    first = _first()
    secret = "B-COMMENT-8812: the passage says twenty days"
    submit_sheet(reviewer_b, first, "contradicted")
    page_b = new_page(reviewer_b)
    page_b.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page_b.fill("#id_comment_body", f"**Note**: {secret} @rev_a")
    page_b.click("text=Add comment")
    expect(page_b.locator(".comment-body")).to_contain_text(secret)
    expect(page_b.locator(".comment-body .mention")).to_have_text("@rev_a")

    page_a = new_page(reviewer_a)
    bodies = watch_bodies(page_a)
    page_a.goto(f"{live_server.url}/claims/{first.pk}/review/")
    expect(page_a.locator("#discussion")).to_have_count(0)
    page_a.click("label.judgment:has-text('Not supported')")
    page_a.click("#submit-sheet")
    # The submit moves on to the reviewer's next claim; a goto before that lands is aborted.
    page_a.wait_for_url(lambda url: f"/claims/{first.pk}/review/" not in url)
    page_a.wait_for_load_state("networkidle")
    assert not any(secret in body for body in bodies)

    page_a.goto(f"{live_server.url}/claims/{first.pk}/review/")
    expect(page_a.locator(".comment-body")).to_contain_text(secret)
    _shoot(page_a, "calib-discussion")
