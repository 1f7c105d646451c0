"""Blind double review in a real browser: two reviewers in separate contexts judge the same
claims, one with the keyboard only; drafts survive a reload; a stale tab and a lost
connection are told so; neither reviewer ever receives the other's sheet."""

import re

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from playwright.sync_api import expect

from audit import services
from audit.models import AuditSheet, Claim
from tests.browser.conftest import saved as _saved
from tests.browser.conftest import screenshot, shown, watch_bodies, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

B_NOTE = "B-SECRET-NOTE-4242"
A_NOTE = "A note: 25 days, checked"


def _claims() -> tuple[Claim, Claim]:
    return (
        Claim.objects.get(answer__external_id="hm-1-a", order=0),
        Claim.objects.get(answer__external_id="hm-1-a", order=1),
    )


def _focused(page) -> dict:
    return page.evaluate(
        "() => ({cls: document.activeElement.className, value: document.activeElement.value,"
        " id: document.activeElement.id})"
    )


def test_two_reviewers_judge_the_same_claims_blind(
    new_page, live_server, opened, reviewer_a, reviewer_b
):
    first, second = _claims()
    page_a = new_page(reviewer_a)
    page_b = new_page(reviewer_b)
    errors = watch_errors(page_a) + watch_errors(page_b)
    seen_by_a = watch_bodies(page_a)
    seen_by_b = watch_bodies(page_b)
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
            // The claim is cut into pieces; the matcher's hint is one of them.
            const words = document.querySelector('#claim-statement .pt.un-hint').firstChild;
            const range = document.createRange();
            const at = words.textContent.indexOf('per year');
            range.setStart(words, at);
            range.setEnd(words, at + 'per year'.length);
            document.getSelection().removeAllRanges();
            document.getSelection().addRange(range);
        }"""
    )
    page_b.click("#add-selection")
    page_b.fill("#id_notes", B_NOTE)
    _saved(page_b)
    screenshot(page_b, "review-b-mouse-draft")
    b_sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_b)
    start = first.text.index("per year")
    assert (b_sheet.judgment, b_sheet.notes, b_sheet.unsupported_assertions) == (
        "partially_supported",
        B_NOTE,
        [{"text": "per year", "start": start, "end": start + 8, "note": ""}],
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
    assert page_a.inner_text("#evidence-count") == "1 evidence span selected"
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


def test_a_save_refused_while_the_database_is_busy_is_kept_and_sent_again(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    # What the server answers when an import job held SQLite's write lock past the busy
    # timeout (tests/test_database_busy.py drives the real lock): 503, nothing written.
    page.route(
        "**/review/save/",
        lambda route: route.fulfill(
            status=503, headers={"Retry-After": "5"}, body="The database is busy."
        ),
    )

    page.keyboard.press("3")
    page.wait_for_selector("#save-status[data-state=error]")
    message = page.inner_text("#save-status .save-message")
    assert not AuditSheet.objects.filter(claim=first, reviewer=reviewer_a).exists()
    page.unroute("**/review/save/")
    _saved(page)

    assert message.startswith(
        "Not saved yet: the database is busy or cannot be reached. Retrying in"
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
    errors = watch_errors(page)

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
    first, second = _claims()
    page = new_page(reviewer_a)
    # The fetch ahead of the next claim (300 ms after the page) is answered with a deletion
    # of the ended session's cookie: it must be in before the login below sets a new one.
    with page.expect_response(lambda r: r.url.endswith(f"/claims/{second.pk}/review/")):
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


def test_retry_now_saves_at_once_after_logging_in_again_without_waiting_the_back_off(
    new_page, live_server, opened, reviewer_a
):
    first, second = _claims()
    page = new_page(reviewer_a)
    # The page's timers run only when the test moves its clock: no retry can fire by
    # itself, so only "Retry now" can have saved.
    page.clock.install()
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    Session.objects.all().delete()

    page.keyboard.press("4")
    # The autosave's short delay, and the fetch ahead of the next claim (300 ms after the
    # page): its answer deletes the ended session's cookie, so it must be in before the new
    # cookie is set, or it deletes that one too.
    with page.expect_response(lambda r: r.url.endswith(f"/claims/{second.pk}/review/")):
        page.clock.run_for(1_000)
    page.wait_for_selector("#save-status[data-state=error]")
    expect(page.locator("#retry-now")).to_be_visible()
    # Logged in again elsewhere: the browser holds a new session. (Not through a second
    # tab's login form: the clock installed above is the whole context's, and a form
    # submitted under a stopped clock can wait for good.)
    fresh = Client()
    fresh.force_login(reviewer_a)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": fresh.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )

    page.click("#retry-now")
    page.wait_for_selector("#save-status[data-state=saved]")
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).judgment == "contradicted"
    expect(page.locator("#retry-now")).to_have_count(0)


def test_nothing_the_page_fetches_after_the_session_ended_loads_the_login_form(
    new_page, live_server, opened, reviewer_a
):
    """The claim that follows is fetched ahead, and "Retry now" fetches this page for a fresh
    token. With the session gone both are redirected to the login form; followed, that form
    starts an anonymous session whose cookie can land after, and replace, the one a login in
    another tab has just set: every save after is refused again."""
    first, second = _claims()
    page = new_page(reviewer_a)
    logins: list[str] = []
    page.on("response", lambda r: logins.append(r.url) if "/login/" in r.url else None)
    page.clock.install()
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    Session.objects.all().delete()

    with page.expect_response(lambda r: r.url.endswith(f"/claims/{second.pk}/review/")) as ahead:
        page.clock.run_for(1_000)  # the fetch ahead starts 300 ms after the page
    page.keyboard.press("4")
    page.clock.run_for(1_000)
    page.wait_for_selector("#save-status[data-state=error]")
    with page.expect_response(lambda r: r.url.endswith(f"/claims/{first.pk}/review/")) as token:
        page.click("#retry-now")
    page.wait_for_selector("#save-status[data-state=error]")
    # A followed redirect is asked for at once: one more round trip and its answer is in.
    page.evaluate("() => fetch('/static/audit/citeaudit.css')")

    assert (ahead.value.status, token.value.status) == (302, 302)
    assert logins == []


# ------------------------------------------------------- autosave, reload, back, network

NOTE = "Checked against the handbook, section 4"


def _posts(page) -> list[tuple[str, int]]:
    """Every POST the page sends, with the status it got back."""
    answered: list[tuple[str, int]] = []
    page.on(
        "response",
        lambda r: answered.append((r.url, r.status)) if r.request.method == "POST" else None,
    )
    return answered


def _type_note_and_tab_onto_submit(page) -> None:
    page.click("#id_notes")
    page.keyboard.type(NOTE)
    page.keyboard.press("Tab")
    assert _focused(page)["id"] == "submit-sheet"


@pytest.mark.parametrize(
    ("key", "judgment"),
    [("3", "not_supported"), ("1", "supported")],
    ids=["complete", "incomplete"],
)
def test_tab_onto_submit_then_waiting_saves_a_draft_and_never_submits(
    new_page, live_server, opened, reviewer_a, key, judgment
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    errors = watch_errors(page)
    url = f"{live_server.url}/claims/{first.pk}/review/"
    page.goto(url)
    posts = _posts(page)

    page.keyboard.press(key)
    _type_note_and_tab_onto_submit(page)
    page.wait_for_timeout(2_000)  # past the autosave delay after typing
    _saved(page)

    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.status, sheet.judgment, sheet.notes) == ("draft", judgment, NOTE)
    assert sorted({post_url for post_url, _ in posts}) == [f"{url}save/"]
    assert page.url == url
    assert page.locator("#sheet-form").count() == 1
    assert page.locator("#save-status").count() == 1
    assert page.locator("#save-status #sheet-form, #save-status #save-status").count() == 0
    assert _focused(page)["id"] == "submit-sheet"
    assert errors == []


def test_a_page_read_before_this_tabs_last_save_was_written_loads_itself_again(
    new_page, live_server, opened, reviewer_a
):
    """A reload sent while a save is on its way can be read before the save is written,
    while the save's answer still reaches the page being left (so it leaves no copy). The
    page read then is played back here: the sheet as it was before the note was saved."""
    first, _ = _claims()
    url = f"{live_server.url}/claims/{first.pk}/review/"
    page = new_page(reviewer_a)
    page.goto(url)
    page.keyboard.press("3")
    _saved(page)
    before_the_note = page.request.get(url).text()
    _type_note_and_tab_onto_submit(page)
    page.wait_for_timeout(2_000)  # past the autosave delay after typing
    _saved(page)
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).notes == NOTE
    reads: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if r.url == url else None)
    page.route(
        url, lambda route: route.fulfill(body=before_the_note, content_type="text/html"), times=1
    )

    page.reload()

    expect(page.locator("#id_notes")).to_have_value(NOTE)
    assert len(reads) == 2  # the old page played back, then the page read again
    page.keyboard.press("2")
    _saved(page)
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.judgment, sheet.notes) == ("partially_supported", NOTE)


def test_reload_right_after_typing_shows_the_note_and_submits_without_conflict(
    new_page, live_server, opened, reviewer_a
):
    first, second = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    posts = _posts(page)
    page.keyboard.press("3")
    _saved(page)

    _type_note_and_tab_onto_submit(page)
    page.reload()

    expect(page.locator("#id_notes")).to_have_value(NOTE)
    _saved(page)
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.status, sheet.judgment, sheet.notes) == ("draft", "not_supported", NOTE)
    page.keyboard.press("s")
    page.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")
    sheet.refresh_from_db()
    assert (sheet.status, sheet.notes) == ("submitted", NOTE)
    assert [status for _, status in posts if status == 409] == []


def test_a_late_copy_of_the_save_sent_on_leaving_is_no_conflict(
    new_page, live_server, opened, reviewer_a
):
    first, second = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    posts = _posts(page)
    page.keyboard.press("3")
    _saved(page)
    sent: list = []
    page.context.on("request", lambda r: sent.append(r) if r.method == "POST" else None)

    page.click("#id_notes")
    page.keyboard.type(NOTE)
    page.reload()
    expect(page.locator("#id_notes")).to_have_value(NOTE)
    _saved(page)
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    # The save sent on leaving may reach the server after the reloaded page saved the same
    # changes again: a copy that arrives late changes nothing.
    copied = ("x-csrftoken", "hx-request", "content-type")
    late = page.request.post(
        sent[0].url,
        data=sent[0].post_data,
        headers={name: value for name, value in sent[0].headers.items() if name in copied},
    )
    page.keyboard.press("s")
    page.wait_for_url(f"{live_server.url}/claims/{second.pk}/review/")

    submitted = AuditSheet.objects.get(pk=sheet.pk)
    assert late.status == 200
    assert (submitted.status, submitted.judgment, submitted.notes) == (
        "submitted",
        "not_supported",
        NOTE,
    )
    assert submitted.version == sheet.version + 1
    assert [status for _, status in posts if status == 409] == []


def test_two_real_tabs_still_conflict(new_page, live_server, opened, reviewer_a):
    first, _ = _claims()
    tab_one = new_page(reviewer_a)
    tab_two = tab_one.context.new_page()
    url = f"{live_server.url}/claims/{first.pk}/review/"
    tab_one.goto(url)
    tab_two.goto(url)

    tab_one.keyboard.press("3")
    _saved(tab_one)
    tab_two.keyboard.press("4")
    tab_two.wait_for_selector("#save-status[data-state=stale]")
    tab_two.keyboard.press("s")
    tab_two.wait_for_selector("#sheet-problems")

    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert tab_two.inner_text("#sheet-problems strong") == (
        "Changed in another tab — reload the page."
    )
    assert (sheet.status, sheet.judgment, sheet.version) == ("draft", "not_supported", 2)


def test_back_after_submitting_shows_the_submitted_sheet(new_page, live_server, opened, reviewer_a):
    first, second = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page.keyboard.press("3")
    page.click("#id_notes")
    page.keyboard.type(NOTE)
    page.keyboard.press("Escape")
    page.locator("#id_notes").blur()
    page.keyboard.press("s")
    shown(page, f"{live_server.url}/claims/{second.pk}/review/")

    page.go_back()
    page.wait_for_selector("#reopen-sheet")

    assert page.url == f"{live_server.url}/claims/{first.pk}/review/"
    assert page.locator("#submit-sheet").count() == 0
    assert page.input_value("#id_notes") == NOTE
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).status == "submitted"


def test_escape_closes_the_shortcuts_and_the_keys_work_again(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")

    page.keyboard.press("?")
    page.keyboard.press("3")
    assert page.locator("input[name=judgment]:checked").count() == 0
    page.keyboard.press("Escape")
    page.keyboard.press("4")
    _saved(page)

    assert page.locator("dialog#shortcuts").get_attribute("open") is None
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).judgment == "contradicted"


def test_a_reload_while_the_network_fails_keeps_the_change_for_when_it_is_back(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page.context.route("**/review/save/", lambda route: route.abort())
    page.keyboard.press("5")
    page.wait_for_selector("#save-status[data-state=error]")
    # Saving fails, so leaving asks first; the reviewer reloads anyway.
    asked = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.accept()))

    page.reload()
    page.context.unroute("**/review/save/")
    page.wait_for_selector("#save-status[data-state=saved]", timeout=30_000)

    assert asked == ["beforeunload"]
    assert page.locator("input[name=judgment][value=wrong_citation]").is_checked()
    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).judgment == "wrong_citation"


def test_enter_on_a_sentence_or_judgment_does_not_submit(new_page, live_server, opened, reviewer_a):
    first, _ = _claims()
    page = new_page(reviewer_a)
    url = f"{live_server.url}/claims/{first.pk}/review/"
    page.goto(url)
    page.click("label.judgment:has-text('Not supported')")
    assert _focused(page)["value"] == "not_supported"
    page.keyboard.press("Enter")
    page.keyboard.press("j")
    assert _focused(page)["cls"] == "sent-toggle"
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    _saved(page)

    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert page.url == url
    assert (sheet.status, sheet.judgment, len(sheet.evidence)) == ("draft", "not_supported", 1)


def test_time_spent_reading_an_untouched_claim_stores_no_sheet(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.clock.install()
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    posts = _posts(page)

    for x in range(0, 500, 10):  # reading, with the mouse, for longer than the heartbeat
        page.mouse.move(200 + x, 300)
        page.clock.run_for(2_000)

    assert posts == []
    assert AuditSheet.objects.count() == 0
    page.keyboard.press("3")
    page.clock.run_for(1_000)
    _saved(page)
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert sheet.judgment == "not_supported"


def test_logging_out_right_after_typing_saves_the_note_first(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    page.click("#id_notes")
    page.keyboard.type(NOTE)

    page.click("form.logout button")
    page.wait_for_url(f"{live_server.url}/login/")

    assert AuditSheet.objects.get(claim=first, reviewer=reviewer_a).notes == NOTE
    assert page.evaluate("() => window.sessionStorage.getItem('citeaudit.pending')") is None


def test_unticking_worth_verifying_with_the_keyboard_is_saved_and_shown_after_a_reload(
    new_page, live_server, opened, reviewer_a
):
    first, _ = _claims()
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{first.pk}/review/")
    worthy = page.locator("input[name=verification_worthy]")
    expect(worthy).to_be_checked()

    page.keyboard.press("3")
    _saved(page)
    worthy.focus()
    with page.expect_response(
        lambda r: (
            r.url.endswith("/review/save/")
            and "verification_worthy" not in (r.request.post_data or "")
        )
    ) as saved:
        page.keyboard.press("Space")
    assert saved.value.status == 200
    expect(worthy).not_to_be_checked()
    page.reload()

    expect(page.locator("input[name=verification_worthy]")).not_to_be_checked()
    sheet = AuditSheet.objects.get(claim=first, reviewer=reviewer_a)
    assert (sheet.judgment, sheet.verification_worthy) == ("not_supported", False)
