"""The next claim is fetched while the current one is judged, and a submit shows it at
once: nothing is loaded after the server's answer, the page that comes in place works as
a loaded one does, Back goes to the claim before, and a submit whose answer is lost on the
way is neither lost nor made twice when sent again."""

import pytest

from audit.models import Adjudication, AuditSheet, Claim
from tests.browser.conftest import saved, screenshot, shown, watch_errors
from tests.browser.test_adjudication import demo_round  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _claims() -> tuple[Claim, Claim, Claim]:
    return tuple(Claim.objects.get(answer__external_id="hm-1-a", order=n) for n in range(3))


def _held(page, url: str) -> None:
    """Wait until the page has fetched the next claim ahead (its prefetch request ended)."""
    page.wait_for_function(
        "url => performance.getEntriesByType('resource').some("
        "e => e.name.endsWith(url) && e.initiatorType === 'fetch' && e.responseEnd > 0)",
        arg=url,
    )


def _judge(page, key: str = "3") -> None:
    page.keyboard.press(key)
    saved(page)


def test_a_submit_shows_the_claim_fetched_ahead_and_that_page_works(
    new_page, live_server, opened, reviewer_a
):
    first, second, third = _claims()
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    _held(page, f"/claims/{second.pk}/review/")
    _judge(page)
    asked = []
    page.on("request", lambda request: asked.append((request.method, request.url)))

    page.keyboard.press("s")
    shown(page, f"{live_server.url}/claims/{second.pk}/review/")
    page.wait_for_selector("ul.messages li:has-text('Submitted. Here is your next claim.')")

    # Only the submit went to the server: the next claim's page was already here.
    assert [m for m, url in asked if f"/claims/{second.pk}/review/" in url and m == "GET"] == []
    assert [m for m, url in asked if url.endswith(f"/claims/{first.pk}/review/submit/")] == ["POST"]
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.status, sheet.judgment) == ("submitted", "not_supported")
    assert page.locator("#claim-statement").inner_text().strip() in second.text
    screenshot(page, "review-next-held")

    # The page shown in place autosaves, holds the claim after it, and submits in turn.
    _held(page, f"/claims/{third.pk}/review/")
    _judge(page, "3")
    assert AuditSheet.objects.get(claim=second, reviewer=reviewer_a).judgment == "not_supported"
    page.keyboard.press("s")
    shown(page, f"{live_server.url}/claims/{third.pk}/review/")
    assert AuditSheet.objects.get(claim=second, reviewer=reviewer_a).status == "submitted"

    # Back: the claim before, as it is now (submitted), loaded afresh.
    page.go_back()
    page.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")
    page.wait_for_selector("#reopen-sheet")
    assert "Submitted" in page.inner_text("#save-status")
    assert errors == []


def test_a_submit_whose_answer_is_lost_is_not_made_twice_when_sent_again(
    new_page, live_server, opened, reviewer_a
):
    first, second, _third = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    _held(page, f"/claims/{second.pk}/review/")
    _judge(page)
    reached = []

    def lose_the_answer(route):
        # The server gets the submit and answers; the page never hears it.
        reached.append(route.fetch().status)
        route.abort("connectionreset")

    page.route("**/review/submit/", lose_the_answer)
    page.keyboard.press("s")
    page.wait_for_selector("#save-status[data-state=error]:has-text('connection dropped')")
    assert reached == [200]
    assert page.url == f"{live_server.url}/claims/{first.pk}/review/"
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert sheet.status == "submitted"
    version = sheet.version

    page.unroute("**/review/submit/")
    page.keyboard.press("s")
    page.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")
    page.wait_for_selector("ul.messages li:has-text('Submitted.')")
    sheet.refresh_from_db()
    assert (sheet.status, sheet.version) == ("submitted", version)
    submits = sheet.history.filter(status="submitted").values_list("submitted_at", flat=True)
    assert len(set(submits)) == 1


def test_a_submit_the_server_refuses_shows_why_on_the_same_claim(
    new_page, live_server, opened, reviewer_a
):
    first, second, _third = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    _held(page, f"/claims/{second.pk}/review/")
    page.keyboard.press("1")  # supported, with no evidence: not complete
    saved(page)

    page.keyboard.press("s")
    page.wait_for_selector("#sheet-problems")
    assert page.url == f"{live_server.url}/claims/{first.pk}/review/"
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.status, sheet.judgment) == ("draft", "supported")
    # The page shown is a working one: a change saves.
    page.keyboard.press("3")
    saved(page)
    sheet.refresh_from_db()
    assert sheet.judgment == "not_supported"


def test_a_lead_saving_gold_sees_the_next_claim_held_ahead(
    new_page,
    live_server,
    demo_round,  # noqa: F811
    lead,
):
    page = new_page(lead)
    first = demo_round["c0"]
    page.goto(f"{live_server.url}/claims/{first.pk}/adjudicate/")
    following = page.get_attribute("#adjudication-form", "data-next-url")
    assert following.endswith("/adjudicate/") and str(first.pk) not in following
    _held(page, following)
    asked = []
    page.on("request", lambda request: asked.append((request.method, request.url)))
    page.select_option("#id_reason", "reviewer_error")
    page.focus("#id_note")
    page.keyboard.press("Escape")
    page.locator("#id_note").blur()

    page.keyboard.press("Shift+A")
    shown(page, f"{live_server.url}{following}")
    page.wait_for_selector(".messages li:has-text('Gold saved')")

    assert [url for method, url in asked if method == "GET" and url.endswith(following)] == []
    gold = Adjudication.objects.get(claim=first)
    assert (gold.source, gold.reason) == ("sheet", "reviewer_error")
