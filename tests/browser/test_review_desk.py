"""The review desk as an expert opens each claim: at 1440×900 and 1024×768 the claim, the
first pre-marked sentence of its cited passage and Submit are all in view without a scroll,
for a short source and for a long one whose matching sentence is far down."""

from __future__ import annotations

import json

import pytest

from audit import services
from audit.models import AuditSet, Claim
from tests.browser.conftest import screenshot, watch_errors
from tests.conftest import import_file
from tests.factories import default_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = [(1440, 900), (1024, 768)]
FILLER = "The committee met on a Tuesday to discuss unrelated matters of procedure."
MATCH = "Customers can return hardware within 30 days of delivery for a full refund."

IN_VIEW = """() => {
    const box = (el) => el ? el.getBoundingClientRect() : null;
    const inside = (r) => !!r && r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
    const claim = box(document.getElementById('claim-statement'));
    const pinned = box(document.getElementById('claim-box'));
    const hint = box(document.querySelector(
        '.review-passage:not(.not-cited) label.sent.hl'));
    const submit = box(document.getElementById('submit-sheet'));
    return {
        page: document.documentElement.scrollHeight - window.innerHeight,
        claim: inside(claim),
        hint: inside(hint) && hint.top >= pinned.bottom,
        submit: inside(submit),
    };
}"""


@pytest.fixture
def long_source(tmp_path, reviewer_a, reviewer_b, lead):
    """A claim whose cited page holds the matching sentence after 400 others."""
    text = " ".join([FILLER] * 400 + [MATCH] + [FILLER] * 50)
    line = {
        "question_id": "refund",
        "question": "How long do customers have to return hardware?",
        "answer_id": "refund-a1",
        "system": "rag v1",
        "answer": "Customers can return hardware within 30 days [1].",
        "passages": [{"title": "Returns policy", "url": "https://example.org/r", "text": text}],
    }
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Long source")
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    import_file(audit_set, path)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    return Claim.objects.get(answer__audit_set=audit_set)


@pytest.mark.parametrize("size", VIEWPORTS, ids=["1440x900", "1024x768"])
def test_claim_first_marked_sentence_and_submit_are_in_view_on_load(
    browser, live_server, opened, long_source, reviewer_a, size
):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", reviewer_a.username)
    page.fill("input[name=password]", "pw-for-tests")
    page.click("button[type=submit]")
    short = Claim.objects.get(answer__external_id="hm-1-a", order=0)

    for name, claim in (("short", short), ("long", long_source)):
        page.goto(f"{live_server.url}/claims/{claim.pk}/review/")
        page.wait_for_load_state("load")
        seen = page.evaluate(IN_VIEW)
        screenshot(page, f"review-desk-{name}-{size[0]}")
        assert seen == {"page": 0, "claim": True, "hint": True, "submit": True}, name

    # The long source's match really is far down its column: it was scrolled to.
    assert page.evaluate("document.querySelector('.review-main').scrollTop") > 1000
    context.close()
    assert errors == []


def test_definitions_can_be_turned_off_and_stay_off_then_show_on_focus(
    new_page, live_server, opened, reviewer_a
):
    claim = Claim.objects.get(answer__external_id="hm-1-a", order=0)
    page = new_page(reviewer_a)
    url = f"{live_server.url}/claims/{claim.pk}/review/"
    page.goto(url)
    definition = page.locator("label.judgment .judgment-def").nth(3)
    assert definition.is_visible()

    page.uncheck("#show-definitions")
    assert not definition.is_visible()
    page.goto(url)  # the choice holds on the next claim and after a reload
    assert not page.locator("#show-definitions").is_checked()
    assert not definition.is_visible()
    # On demand: a judgment's meaning shows while it has the keyboard focus, and in ?.
    page.locator("input[name=judgment]").nth(3).focus()
    assert definition.is_visible()
    page.locator("#claim-statement").focus()
    assert not definition.is_visible()
    page.keyboard.press("?")
    assert page.locator("#shortcuts .definition-list dd").nth(3).is_visible()
