"""Blind double review in a real browser: two reviewers in separate contexts judge the same
claims, one with the keyboard only; drafts survive a reload; a stale tab and a lost
connection are told so; neither reviewer ever receives the other's sheet."""

import contextlib
import re

import pytest
from django.contrib.sessions.models import Session
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from audit import services
from audit.models import AuditSheet, Claim
from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

B_NOTE = "B-SECRET-NOTE-4242"
A_NOTE = "A note: 25 days, checked"


def _watch_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def _watch_bodies(page) -> list[str]:
    """Every HTML document and htmx fragment the page receives, for the blindness check."""
    bodies: list[str] = []

    def keep(response) -> None:
        if "text/html" in (response.headers.get("content-type") or ""):
            # A redirect has no body to keep.
            with contextlib.suppress(PlaywrightError):
                bodies.append(response.text())

    page.on("response", keep)
    return bodies


def _claims() -> tuple[Claim, Claim]:
    return (
        Claim.objects.get(answer__external_id="hm-1-a", order=0),
        Claim.objects.get(answer__external_id="hm-1-a", order=1),
    )


def _saved(page) -> None:
    page.wait_for_selector("#save-status[data-state=saved]")


def _focused(page) -> dict:
    return page.evaluate(
        "() => ({cls: document.activeElement.className, value: document.activeElement.value,"
        " id: document.activeElement.id})"
    )


@pytest.fixture
def opened(handmade, reviewer_a, reviewer_b, lead):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    return handmade


def test_two_reviewers_judge_the_same_claims_blind(
    new_page, live_server, opened, reviewer_a, reviewer_b
):
    first, second = _claims()
    page_a = new_page(reviewer_a)
    page_b = new_page(reviewer_b)
    errors = _watch_errors(page_a) + _watch_errors(page_b)
    seen_by_a = _watch_bodies(page_a)
    seen_by_b = _watch_bodies(page_b)
    evidence_text = (
        "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
    )

    # Reviewer B, with the mouse: one sentence, a judgment, words of the claim, a note.
    page_b.goto(f"{live_server.url}/")
    page_b.click("text=Continue")
    assert page_b.url == f"{live_server.url}/claims/{first.pk}/review/"
    page_b.click(f"label.sent:has-text('{evidence_text}')")
    page_b.click("label.judgment:has-text('Partially supported')")
    page_b.evaluate(
        """() => {
            const claim = document.getElementById('claim-statement').firstChild;
            const range = document.createRange();
            const at = claim.textContent.indexOf('per year');
            range.setStart(claim, at);
            range.setEnd(claim, at + 'per year'.length);
            document.getSelection().removeAllRanges();
            document.getSelection().addRange(range);
        }"""
    )
    page_b.click("#add-selection")
    page_b.fill("#id_notes", B_NOTE)
    _saved(page_b)
    screenshot(page_b, "review-b-mouse-draft")
    b_sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_b)
    assert (b_sheet.judgment, b_sheet.notes, b_sheet.unsupported_assertions) == (
        "partially_supported",
        B_NOTE,
        ["per year"],
    )

    # Reviewer A, keyboard only.
    page_a.goto(f"{live_server.url}/sets/{opened.pk}/continue/")
    assert page_a.url == f"{live_server.url}/claims/{first.pk}/review/"
    page_a.keyboard.press("?")
    assert page_a.locator("dialog#shortcuts").get_attribute("open") == ""
    screenshot(page_a, "review-shortcuts")
    page_a.keyboard.press("Escape")
    assert page_a.locator("dialog#shortcuts").get_attribute("open") is None

    page_a.keyboard.press("j")
    page_a.keyboard.press("j")
    page_a.keyboard.press("ArrowDown")
    page_a.keyboard.press("k")
    focused = _focused(page_a)
    assert focused["cls"] == "sent-toggle"
    page_a.keyboard.press("Space")
    page_a.keyboard.press("1")
    _saved(page_a)
    for _ in range(60):
        if _focused(page_a)["id"] == "id_notes":
            break
        page_a.keyboard.press("Tab")
    assert _focused(page_a)["id"] == "id_notes"
    # Letters that are shortcuts elsewhere must type into the field, not act.
    page_a.keyboard.type(A_NOTE + " s n 3 j")
    _saved(page_a)
    assert page_a.url == f"{live_server.url}/claims/{first.pk}/review/"
    screenshot(page_a, "review-a-keyboard-draft")

    page_a.reload()
    assert page_a.locator(f"input.sent-toggle[value='{focused['value']}']").is_checked()
    assert page_a.locator("input[name=judgment][value=supported]").is_checked()
    assert page_a.input_value("#id_notes") == A_NOTE + " s n 3 j"
    assert page_a.inner_text("#evidence-count") == "1 evidence sentence selected"
    a_sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert [e["text"] for e in a_sheet.evidence] == [evidence_text]

    page_a.keyboard.press("s")
    page_a.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")
    page_a.wait_for_selector("#sheet-form")
    a_sheet.refresh_from_db()
    assert (a_sheet.status, a_sheet.judgment) == ("submitted", "supported")
    assert a_sheet.active_seconds >= 1
    third = Claim.objects.get(answer__external_id="hm-1-a", order=2)
    page_a.keyboard.press("n")
    page_a.wait_for_url(f"{live_server.url}/claims/{third.pk}/review/")

    # B submits too; only now are both sheets in.
    page_b.click("#submit-sheet")
    page_b.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")
    b_sheet.refresh_from_db()
    assert b_sheet.status == "submitted"

    # A reopens the first claim from the keyboard: the submitted version stays in history.
    page_a.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page_a.focus("#reopen-sheet")
    page_a.keyboard.press("Enter")
    page_a.wait_for_selector("#submit-sheet")
    screenshot(page_a, "review-a-reopened")
    a_sheet.refresh_from_db()
    assert (a_sheet.status, a_sheet.history.filter(status="submitted").count()) == ("draft", 1)

    assert seen_by_a and seen_by_b
    assert [body for body in seen_by_a if B_NOTE in body or "per year\n" in body] == []
    assert [body for body in seen_by_b if "A note: 25 days" in body] == []
    assert errors == []


def test_a_stale_tab_is_told_to_reload_and_never_overwrites(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    tab_one = new_page(reviewer_a)
    tab_two = tab_one.context.new_page()
    url = f"{live_server.url}/claims/{first.pk}/review/"
    tab_one.goto(url)
    tab_two.goto(url)

    tab_one.fill("#id_notes", "written in tab one")
    _saved(tab_one)
    tab_two.fill("#id_notes", "written in tab two")
    tab_two.wait_for_selector("#save-status[data-state=stale]")

    screenshot(tab_two, "review-stale-tab")
    assert tab_two.inner_text("#save-status .save-message") == (
        "Changed in another tab — reload the page. Nothing from this tab was saved."
    )
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).notes == "written in tab one"


def test_a_failed_save_says_so_and_retries(new_page, live_server, opened, reviewer_a):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page.route("**/review/save/", lambda route: route.abort())

    page.keyboard.press("3")
    page.wait_for_selector("#save-status[data-state=error]")
    message = page.inner_text("#save-status .save-message")
    screenshot(page, "review-save-retrying")
    page.unroute("**/review/save/")
    _saved(page)

    assert re.fullmatch(
        r"Not saved: no connection\. Retrying in \d+ s; your changes stay on this page\.", message
    )
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).judgment == "not_supported"


def test_lead_pages_render(new_page, live_server, opened, lead, reviewer_a):
    first, _ = _claims()
    sheet = services.sheet_for(claim=first, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet,
        user=reviewer_a,
        version=1,
        data=services.SheetData(judgment="not_supported"),
    )
    services.guideline_flag_raise(claim=first, user=reviewer_a, comment="Is 'per year' a fact?")
    page = new_page(lead)
    errors = _watch_errors(page)

    page.goto(f"{live_server.url}/sets/{opened.pk}/progress/")
    screenshot(page, "review-lead-progress")
    page.goto(f"{live_server.url}/sets/{opened.pk}/claims/")
    page.select_option("select[name=status]", "partly_submitted")
    expect(page.locator("#results tbody tr")).to_have_count(1)
    screenshot(page, "review-lead-claims")

    assert page.inner_text("#results tbody tr .status") == "1 of 2"
    assert errors == []


def test_a_save_after_the_session_ended_is_kept_until_the_reviewer_logs_in_again(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    Session.objects.all().delete()

    page.keyboard.press("4")
    page.wait_for_selector("#save-status[data-state=error]")
    message = page.inner_text("#save-status .save-message")
    login = page.context.new_page()
    login.goto(f"{live_server.url}/login/")
    login.fill("input[name=username]", reviewer_a.username)
    login.fill("input[name=password]", "pw-for-tests")
    login.click("button[type=submit]")
    page.wait_for_selector("#save-status[data-state=saved]", timeout=30_000)

    assert message.startswith("Not saved: your session has ended. Log in again in another tab.")
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).judgment == "contradicted"
