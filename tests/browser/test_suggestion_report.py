"""The Suggestions page in a real browser: every source in one table that fits a 1024px
window, the pre-highlighting source marked, and the anchoring comparison below it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from audit.models import AuditSheet
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import anchoring_set, suggestion_gold_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_comparison_fits_and_shows_every_source(
    new_page, live_server, lead, reviewer_a, reviewer_b
):
    audit_set, claims, _, _ = suggestion_gold_set(reviewer_a, reviewer_b)
    # Half the claims had their suggestions withheld: the anchoring section appears.
    other = anchoring_set(reviewer_a, reviewer_b)
    AuditSheet.objects.filter(claim__in=claims[5:]).update(suggestions_withheld=True)
    page = new_page(lead)
    errors = watch_errors(page)
    for target, rows in ((audit_set, 3), (other, 1)):
        page.goto(f"{live_server.url}/sets/{target.pk}/suggestions/compare/")
        expect(page.locator("#sources tbody tr")).to_have_count(rows)
        expect(page.locator("#sources tr.current")).to_contain_text("Matcher")
        expect(page.locator("#anchoring-table tbody tr")).to_have_count(3)
        for width in (1440, 1024):
            page.set_viewport_size({"width": width, "height": 900})
            fits = page.evaluate(
                """() => {
                    const table = document.querySelector('#sources');
                    const box = table.parentElement;
                    return {page: document.documentElement.scrollWidth <= window.innerWidth,
                            table: table.scrollWidth <= box.clientWidth + 1};
                }"""
            )
            screenshot(page, f"suggestions-{target.name.lower()}-{width}")
            assert fits == {"page": True, "table": True}, width
    expect(page.locator("#sources")).to_contain_text("pre-highlights")
    # Near-total agreement is no automation bias: only kept suggestions are flagged.
    expect(page.locator("#anchoring-table .bias-mark")).to_have_count(0)
    assert errors == []
