"""A lead opens the release report, writes criteria after review started (and sees that
flagged), follows a failed criterion to its claims and compares two runs, in a real browser."""

import pytest
from playwright.sync_api import expect

from audit import services
from tests.browser.conftest import screenshot, watch_errors
from tests.views import test_reports
from tests.views.test_reports import CRITERIA

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The third run the report view tests judge, shared rather than built twice.
three_runs = test_reports.three_runs


def test_lead_reads_report_edits_criteria_and_compares_runs(
    new_page, live_server, three_runs, lead
):
    audit_set = three_runs["set"]
    services.criteria_update(
        audit_set=audit_set, criteria=CRITERIA[:3], by=lead, reason="first written late"
    )
    page = new_page(lead)
    errors = watch_errors(page)
    base = f"{live_server.url}/sets/{audit_set.pk}"

    page.goto(f"{base}/")
    expect(page.locator(".set-release")).to_contain_text("5 of 25")
    screenshot(page, "reports-set-page")

    page.click("text=Release report")
    v3 = page.locator("section.release-card", has_text="handmade v3")
    expect(v3.locator(".release-fail")).to_have_text("FAIL")
    expect(v3).to_contain_text("Claims fully supported by their own citations: 5 of 7")
    expect(page.locator("figure.judgment-bars svg rect.jb-supported")).to_have_count(1)
    screenshot(page, "reports-report")

    v3.get_by_role("link", name="1 claim").first.click()
    expect(page.locator("h1")).to_contain_text("No contradicted claim in answers tagged leave")
    expect(page.locator("tbody tr")).to_have_count(1)
    screenshot(page, "reports-failing-claims")

    page.goto(f"{base}/criteria/")
    expect(page.locator(".callout-warn")).to_contain_text("Locked")
    page.check("input[name=uncited_only_if_not_worthy]")
    page.fill("input[name=min_supported_share_percent]", "75")
    # Locked: the browser itself asks for the reason before posting.
    page.click("text=Save criteria")
    expect(page.locator("h1")).to_have_text("Acceptance criteria")
    assert page.locator("textarea[name=reason]").evaluate("el => el.validity.valueMissing")
    page.fill("textarea[name=reason]", "Uncited claims count from this run on.")
    screenshot(page, "reports-criteria")
    page.click("text=Save criteria")
    expect(page.locator(".callout-warn").first).to_contain_text(
        "Criteria changed after review started"
    )
    expect(page.locator(".callout-warn").first).to_contain_text(
        "Uncited claims count from this run on."
    )
    expect(v3.locator(".criteria-results li")).to_have_count(4)
    screenshot(page, "reports-report-after-change")

    page.goto(f"{base}/compare/")
    # The page starts with two different runs: the two latest, older as A.
    expect(page.locator("select[name=a]")).to_have_value("system:handmade v2")
    expect(page.locator("select[name=b]")).to_have_value("system:handmade v3")
    page.select_option("select[name=a]", "system:handmade v1")
    page.click("button:has-text('Compare')")
    # v1 has no judgments: its pairs with v3 are "judged in B only", never "changed".
    expect(page.locator("#became_supported")).to_have_text("Became supported (0)")
    expect(page.locator("#newly_judged")).to_have_text("Judged in B only (6)")
    expect(page.locator("#unanswered-b")).to_have_text("Not answered by run B: claims of A (4)")
    screenshot(page, "reports-compare")
    assert errors == []


def test_the_reports_wide_tables_fit_a_1024_pixel_window(new_page, live_server, opened, lead):
    page = new_page(lead)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{live_server.url}/sets/{opened.pk}/report/")

    # Each table's own width against its box: more would be a sideways scroll inside it.
    widths = page.evaluate(
        "Array.from(document.querySelectorAll('table.metrics-table, table.answers-table'))"
        ".map(t => t.scrollWidth - t.parentElement.clientWidth)"
    )
    assert widths == [0, 0]
