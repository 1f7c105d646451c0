"""A lead sets up an automatic judge pointing at the local fake endpoint, writes its
threshold, runs it (a real worker process), watches the progress, reads its calibration
against gold and accepts it, then finds it on the release report, in a real browser."""

import re

import pytest
from playwright.sync_api import expect

from audit import services
from audit.models import Adjudication
from tests.browser.conftest import screenshot, watch_errors
from tests.conftest import refund_set_with_gold
from tests.test_judges import AGREE

# A set of a few gold claims: below the operator's floor (30 by default).
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("egress_loopback", "small_gold_floor"),
]


def _shots(page, name: str) -> None:
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"{name}-{width}")


def test_lead_configures_runs_calibrates_and_accepts_a_judge(
    new_page, live_server, lead, fake_llm, start_worker
):
    audit_set, claims = refund_set_with_gold(lead)
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    # The judge calls claim 1 supported; gold says partially supported.
    fake_llm.behaviour[claims[0].text] = {"judgment": "supported", "evidence": [1]}
    fake_llm.delay_seconds = 1.0
    page = new_page(lead)
    # The first calibration imports scikit-learn in the server: seconds on a loaded machine.
    page.set_default_timeout(60_000)
    errors = watch_errors(page)

    page.goto(f"{live_server.url}/sets/{audit_set.pk}/")
    page.locator("nav.subnav").get_by_role("link", name="Judges").click()
    expect(page.locator("h1")).to_have_text("Automatic judges")
    page.fill("input[name=name]", "house")
    page.fill("input[name=base_url]", fake_llm.base_url)
    page.fill("input[name=model]", "fake-1")
    page.fill("input[name=max_concurrency]", "1")
    page.fill("input[name=price_per_million]", "2.5")
    expect(page.locator("textarea[name=template]")).to_contain_text("$reply_format")
    _shots(page, "judges-list")
    page.click("button:has-text('Set up judge')")

    expect(page.locator("h1")).to_contain_text("house v1")
    page.fill("input[name=min_kappa]", "-1")
    page.fill("input[name=min_gold]", "3")
    page.click("button:has-text('Write threshold')")
    expect(page.locator(".messages")).to_contain_text("Threshold written down")
    page.click("button:has-text('Run v1')")
    expect(page.locator(".messages")).to_contain_text(re.compile(r"Run \d+ queued: 3 claims\."))

    worker = start_worker("--batch")
    runs = page.locator("#runs")
    expect(runs.locator("progress")).to_be_visible(timeout=30_000)
    _shots(page, "judges-running")
    expect(runs).to_contain_text("Finished", timeout=60_000)
    assert worker.wait(timeout=60) == 0, worker.stderr.read()
    row = runs.locator("tbody tr").first
    expect(row.locator("td").nth(4)).to_have_text("3")  # verdicts
    expect(row.locator("td").nth(5)).to_have_text("0")  # errors
    expect(row.locator("td").nth(6)).to_have_text("120000")  # tokens per 1,000 claims
    _shots(page, "judges-detail")

    page.click("text=Calibration against gold")
    expect(page.locator("main")).to_contain_text("On 3 gold claims")
    # Claim 1: gold partially supported, judge supported — the one disagreement.
    confusion = page.locator("#confusion")
    partial_row = confusion.locator("tr", has_text="Partially supported")
    expect(partial_row.locator("td.differ")).to_have_text("1")
    expect(page.locator("#threshold-result")).to_contain_text("Meets its threshold.")
    _shots(page, "judges-calibration")
    page.click("button:has-text('Accept v1 for this set')")
    expect(page.locator("#threshold-result")).to_contain_text("Accepted by lead")

    page.locator("nav.subnav").get_by_role("link", name="Release report").click()
    expect(page.locator("#provenance-table")).to_contain_text("rag-v1")
    expect(page.locator("body")).to_contain_text("Accepted judge: house v1 (fake-1)")
    page.locator("#provenance").scroll_into_view_if_needed()
    _shots(page, "judges-report")

    # Claims 2 and 3 lose their gold: no human has judged them, and the accepted judge's
    # verdicts stand for them in the lines marked as the judge's, never in the headline.
    Adjudication.objects.filter(claim__in=claims[1:]).delete()
    services.claims_changed(claim_ids=[c.pk for c in claims], audit_set_id=audit_set.pk)
    services.criteria_update(
        audit_set=audit_set, criteria=[{"kind": "max_wrong_citations", "limit": 0}], by=lead
    )
    page.reload()
    card = page.locator(".release-card", has_text="rag-v1")
    expect(card.locator(".headline")).to_contain_text("0 of 3")
    expect(card.locator(".release-provisional")).to_be_visible()
    figure = card.locator(".judge-figure")
    expect(figure).to_contain_text("standing for 2 claims no human judged")
    expect(figure.locator(".release-fail")).to_be_visible()
    # Keyboard: from the card's link to the table that says where each figure comes from.
    figure.get_by_role("link", name="Where the figures come from").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#provenance$"))
    judged = page.locator("#with-judge-table tbody tr", has_text="rag-v1")
    expect(judged.locator("td").nth(3)).to_have_text("2")
    expect(page.locator(".judge-results")).to_contain_text(
        "judge Claim 3 of a1: “Opened software licences cannot be returned.”"
    )
    _shots(page, "judges-report-filled")
    assert errors == []
