"""An answer whose every citation fails a machine check: the set page's badge and filter
and the answer page's flag, at both widths, as a lead sees them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from audit.models import Answer
from tests.browser.conftest import screenshot, watch_errors
from tests.conftest import FIXTURES, import_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def test_lead_filters_answers_no_citation_verifies(new_page, lead, audit_set, live_server):
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    flagged = Answer.objects.get(audit_set=audit_set, external_id="hm-5-a")
    page = new_page(lead)
    errors = watch_errors(page)

    page.goto(f"{live_server.url}{audit_set.get_absolute_url()}")
    assert page.locator("#results tbody tr").count() == 7
    page.select_option("select[name=no_citation_verifies]", "true")
    expect(page.locator("#results tbody tr")).to_have_count(2)
    badges = page.locator("#results .no-citation-verifies")
    assert badges.count() == 2
    assert badges.first.is_visible()
    assert badges.first.get_attribute("title") == (
        "No citation verifies: answered without sources?"
    )
    assert "no_citation_verifies=true" in page.url
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(OVERFLOW) <= 0
        screenshot(page, f"set-detail-no-citation-verifies-{width}")

    page.click(f"#results a[href='{flagged.get_absolute_url()}']")
    flag = page.locator(".question .no-citation-verifies")
    assert flag.inner_text() == "No citation verifies: answered without sources?"
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        assert flag.is_visible()
        assert page.evaluate(OVERFLOW) <= 0
        screenshot(page, f"answer-detail-no-citation-verifies-{width}")
    assert errors == []
