import json
import re
import time

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from audit import selectors, services
from audit.judgments import Assertion
from audit.models import Answer, Assignment, AuditSet, AuditSheet, Claim, GuidelineFlag
from audit.services import AtomicPart, SheetData
from audit.services.tallies import reviewer_tallies_refresh
from tests.conftest import import_file
from tests.factories import UserFactory, default_workspace

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _evidence(claim: Claim, position: int, needle: str) -> str:
    text = claim.answer.passages.get(position=position).text
    start = text.index(needle)
    return f"{position}:{start}:{start + len(needle)}"


def _form(version: int = 1, **fields) -> dict:
    data = {"version": version, "verification_worthy": "on", "active_seconds": 0}
    data.update(fields)
    return data


def _save(client, claim: Claim, **fields):
    return client.post(reverse("audit:review-save", args=[claim.pk]), _form(**fields), **HTMX)


def _submitted(user, claim: Claim, **data) -> AuditSheet:
    sheet = services.sheet_for(claim=claim, reviewer=user)
    return services.sheet_submit(
        sheet=sheet, user=user, version=sheet.version, data=SheetData(**data)
    )


# ------------------------------------------------------------------------------ home


def test_home_shows_the_reviewers_own_progress_per_set(client_for, opened, reviewer_a, claim):
    _submitted(reviewer_a, claim, judgment="not_supported")

    response = client_for(reviewer_a).get(reverse("audit:home"))

    rows = [(s.name, s.done, s.assigned) for s, _ in response.context["my_sets"]]
    assert response.status_code == 200
    assert rows == [("Calibration", 1, 18)]
    assert response.context["lead_sets"] is None
    assert (
        f'href="{reverse("audit:review-continue", args=[opened.pk])}"' in response.content.decode()
    )


def test_lead_home_lists_every_set_with_progress(client_for, opened, lead, reviewer_a, claim):
    _submitted(reviewer_a, claim, judgment="not_supported")
    AuditSet.objects.create(workspace=default_workspace(), name="Unopened")

    response = client_for(lead).get(reverse("audit:home"))

    rows = [(s.name, s.done, s.assigned) for s in response.context["lead_sets"]]
    assert sorted(rows) == [("Calibration", 1, 36), ("Unopened", 0, 0)]
    assert response.context["my_sets"] == []


def test_continue_opens_the_next_unfinished_claim_in_answer_order(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    url = reverse("audit:review-continue", args=[opened.pk])

    first = client.get(url)
    _submitted(reviewer_a, claim, judgment="not_supported")
    second = client.get(url)

    following = Claim.objects.get(answer__external_id="hm-1-a", order=1)
    assert first.url == reverse("audit:review-claim", args=[claim.pk])
    assert second.url == reverse("audit:review-claim", args=[following.pk])


def test_continue_with_nothing_left_goes_home(client_for, opened, reviewer_a):
    Assignment.objects.filter(reviewer=reviewer_a).delete()

    response = client_for(reviewer_a).get(reverse("audit:review-continue", args=[opened.pk]))

    assert response.url == reverse("audit:home")


# ----------------------------------------------------------------------- review page


def test_review_page_shows_the_claim_in_its_answer_with_hints_and_sentences(
    client_for, opened, reviewer_a, claim
):
    response = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    body = response.content.decode()
    assert response.status_code == 200
    assert (
        '<mark class="claim current" id="current-claim">'
        "Full-time employees receive 25 days of paid annual leave per year </mark>"
    ) in body
    statement = re.search(r'<p class="claim-statement[^>]*>(.*?)</p>', body).group(1)
    assert re.sub(r"<[^>]+>", "", statement) == claim.text
    assert re.findall(r'<span class="pt[^"]*" data-o="(\d+)">', statement)[0] == "0"
    assert body.count('class="sent-toggle" name="evidence"') == 8
    assert (
        len(re.findall(r'<label class="sent hl" [^>]*title="Machine hint: best match #1">', body))
        == 1
    )
    assert body.count('<input type="radio" name="judgment"') == 7
    assert re.findall(
        r'<kbd>(\d)</kbd> <span class="judgment-text"><span class="judgment-label">([^<]+)</span>',
        body,
    ) == [
        ("1", "Supported"),
        ("2", "Partially supported"),
        ("3", "Not supported"),
        ("4", "Contradicted"),
        ("5", "Wrong citation"),
        ("6", "Source inaccessible"),
        ("7", "Unclear"),
    ]
    assert response.context["cited"] == [1]
    assert [p["passage"].position for p in response.context["other_passages"]] == [2]


def test_viewing_a_claim_stores_no_sheet(client_for, opened, reviewer_a, claim):
    response = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    progress = {p.username: p.drafts for p in selectors.reviewer_progress(audit_set=opened)}
    assert response.status_code == 200
    assert response.context["sheet"].pk is None
    assert '<input type="hidden" name="version" value="1">' in response.content.decode()
    assert AuditSheet.objects.count() == 0
    assert AuditSheet.history.count() == 0
    assert progress == {"rev_a": 0, "rev_b": 0}


def test_reopening_a_claim_never_judged_stores_no_sheet(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)

    response = client.post(reverse("audit:review-reopen", args=[claim.pk]), follow=True)

    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == ["This sheet is not submitted."]
    assert AuditSheet.objects.count() == 0
    assert AuditSheet.history.count() == 0


def test_the_first_save_stores_the_sheet_with_the_claim_as_shown(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    client.get(reverse("audit:review-claim", args=[claim.pk]))

    response = _save(client, claim, notes="first words")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.status_code == 200
    assert (sheet.answer_statement, sheet.notes, sheet.version, sheet.status) == (
        claim.text,
        "first words",
        2,
        "draft",
    )
    assert sheet.cited_urls == list(
        claim.citations.order_by("position").values_list("url", flat=True)
    )


def _opened(claim: Claim, seconds_ago: int) -> str:
    """The token a review page shown `seconds_ago` carries."""
    at = int(time.time()) - seconds_ago
    return signing.dumps({"claim": claim.pk, "at": at}, salt="audit.review-opened")


def test_the_first_save_counts_the_reading_time_since_the_page_was_shown(
    client_for, opened, reviewer_a, claim
):
    page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))
    shown = re.search(r'name="opened" value="([^"]+)"', page.content.decode()).group(1)

    _save(client_for(reviewer_a), claim, opened=_opened(claim, 600), active_seconds=500)

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert signing.loads(shown, salt="audit.review-opened")["claim"] == claim.pk
    assert sheet.active_seconds == 500


def test_the_first_save_counts_no_more_than_the_pages_age(client_for, opened, reviewer_a, claim):
    other = Claim.objects.get(answer__external_id="hm-1-a", order=1)
    client = client_for(reviewer_a)

    forged = "x" + _opened(claim, 600)
    _save(client, claim, opened=forged, active_seconds=500)
    _save(client, other, opened=_opened(claim, 600), active_seconds=500)

    seconds = dict(
        AuditSheet.objects.filter(reviewer=reviewer_a).values_list("claim_id", "active_seconds")
    )
    # Two seconds of slack: a forged token, or one from another claim's page, counts for
    # no more than the time since the sheet was stored.
    assert seconds == {claim.pk: 2, other.pk: 2}


def test_the_review_page_is_never_taken_from_the_browser_cache(
    client_for, opened, reviewer_a, claim
):
    response = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    assert response["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"


def test_review_page_renders_guidelines_markdown_sanitised(client_for, opened, reviewer_a, claim):
    opened.guidelines = "**Cited only.** <script>alert(1)</script> [x](javascript:alert(1))"
    opened.save()

    body = (
        client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk])).content.decode()
    )

    assert '<div class="guidelines-body"><p><strong>Cited only.</strong>' in body
    assert "<script>alert(1)" not in body
    assert "javascript:" not in body


def test_review_page_escapes_imported_text(
    client_for, audit_set, reviewer_a, reviewer_b, lead, tmp_path
):
    payload = "<img src=x onerror=alert(1)>"
    line = {
        "question_id": "x1",
        "question": payload,
        "system": payload,
        "answer": f"A claim with {payload} inside [1].",
        "passages": [{"title": payload, "url": payload, "text": f"Source {payload} here."}],
    }
    path = tmp_path / "xss.jsonl"
    path.write_text(json.dumps(line) + "\n")
    import_file(audit_set, path)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )

    body = (
        client_for(reviewer_a)
        .get(reverse("audit:review-claim", args=[Claim.objects.get().pk]))
        .content.decode()
    )

    assert "<img src=x" not in body
    # The claim is cut into pieces (for selecting words); its text is still escaped whole.
    assert body.count("&lt;img src=x onerror=alert(1)&gt;") == 6
    statement = re.search(r'<p class="claim-statement[^>]*>(.*?)</p>', body).group(1)
    assert (
        re.sub(r"<[^>]+>", "", statement)
        == "A claim with &lt;img src=x onerror=alert(1)&gt; inside."
    )


def test_autosave_returns_the_status_partial_with_the_new_version(
    client_for, opened, reviewer_a, claim
):
    evidence = _evidence(claim, 1, "Full-time employees are entitled to 25 days")

    response = _save(
        client_for(reviewer_a), claim, judgment="supported", evidence=[evidence], notes="ok"
    )

    body = response.content.decode()
    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="save-status" class="save-status" data-state="saved"')
    assert '<input type="hidden" name="version" value="2">' in body
    assert (sheet.judgment, sheet.notes, sheet.version, sheet.verification_worthy) == (
        "supported",
        "ok",
        2,
        True,
    )
    assert [e["text"] for e in sheet.evidence] == ["Full-time employees are entitled to 25 days"]


def test_a_stale_save_from_a_second_tab_is_refused_with_409(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    first = _save(client, claim, notes="first tab")

    second = _save(client, claim, notes="second tab")

    body = second.content.decode()
    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert (first.status_code, second.status_code) == (200, 409)
    assert 'data-state="stale"' in body
    assert "Changed in another tab — reload the page. Nothing from this tab was saved." in body
    assert '<input type="hidden" name="version" value="1">' in body
    assert (sheet.notes, sheet.version) == ("first tab", 2)


def test_a_stale_submit_without_javascript_shows_the_reload_message(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _save(client, claim, notes="first tab")

    response = client.post(
        reverse("audit:review-submit", args=[claim.pk]), _form(judgment="not_supported")
    )

    assert response.status_code == 409
    assert "Changed in another tab — reload the page." in response.content.decode()
    assert AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).status == "draft"


def test_an_invalid_save_says_why_and_keeps_the_sheet(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    _save(client, claim, notes="kept")

    response = _save(client, claim, version=2, notes="lost", evidence=["1:0:99999"])

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.status_code == 400
    assert "Not saved: Evidence offsets 0–99999 are outside [1]." in response.content.decode()
    assert (sheet.version, sheet.notes) == (2, "kept")


def test_an_invalid_first_save_stores_no_sheet(client_for, opened, reviewer_a, claim):
    response = _save(client_for(reviewer_a), claim, evidence=["1:0:99999"])

    assert response.status_code == 400
    assert AuditSheet.objects.count() == 0
    assert AuditSheet.history.count() == 0


def _tab_save(client, claim: Claim, *, tab: str, seq: int, version: int, **fields):
    return _save(client, claim, version=version, tab=tab, seq=seq, **fields)


TAB_ONE = "tab-one-0123456789abcdef"
TAB_TWO = "tab-two-0123456789abcdef"


def test_a_tabs_own_earlier_save_is_not_a_conflict(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    # The save sent on leaving the page arrives first; the reloaded page had read version 1.
    left = _tab_save(client, claim, tab=TAB_ONE, seq=1, version=1, notes="typed")

    reloaded = _tab_save(client, claim, tab=TAB_ONE, seq=2, version=1, notes="typed, more")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert (left.status_code, reloaded.status_code) == (200, 200)
    assert '<input type="hidden" name="version" value="3">' in reloaded.content.decode()
    assert (sheet.notes, sheet.version) == ("typed, more", 3)


def test_another_tab_on_an_older_version_still_gets_409(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    _tab_save(client, claim, tab=TAB_ONE, seq=1, version=1, notes="tab one")

    other = _tab_save(client, claim, tab=TAB_TWO, seq=1, version=1, notes="tab two")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert other.status_code == 409
    assert (sheet.notes, sheet.version) == ("tab one", 2)


def test_a_late_copy_of_an_older_save_never_overwrites_a_newer_one(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _tab_save(client, claim, tab=TAB_ONE, seq=5, version=1, notes="newer")

    late = _tab_save(client, claim, tab=TAB_ONE, seq=4, version=1, notes="older")
    again = _tab_save(client, claim, tab=TAB_ONE, seq=5, version=1, notes="newer")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert (late.status_code, again.status_code) == (200, 200)
    assert '<input type="hidden" name="version" value="2">' in late.content.decode()
    assert (sheet.notes, sheet.version, sheet.history.count()) == ("newer", 2, 2)


def test_a_tabs_older_version_is_stale_again_after_a_submit_and_reopen(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _tab_save(client, claim, tab=TAB_ONE, seq=1, version=1, notes="draft")
    client.post(
        reverse("audit:review-submit", args=[claim.pk]),
        _form(version=2, judgment="not_supported", notes="submitted"),
    )
    client.post(reverse("audit:review-reopen", args=[claim.pk]))

    late = _tab_save(client, claim, tab=TAB_ONE, seq=2, version=2, notes="from the old page")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert late.status_code == 409
    assert (sheet.notes, sheet.status, sheet.version) == ("submitted", "draft", 4)


def test_a_malformed_tab_id_only_makes_the_version_check_strict(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _tab_save(client, claim, tab="x<script>", seq=1, version=1, notes="first")

    second = _tab_save(client, claim, tab="x<script>", seq=2, version=1, notes="second")

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert second.status_code == 409
    assert (sheet.notes, sheet.client_tab) == ("first", "")


def test_save_without_javascript_redirects_back_to_the_claim(client_for, opened, reviewer_a, claim):
    response = client_for(reviewer_a).post(
        reverse("audit:review-save", args=[claim.pk]), _form(notes="plain post")
    )

    assert response.url == reverse("audit:review-claim", args=[claim.pk])
    assert AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).notes == "plain post"


def test_an_htmx_save_after_the_session_ended_gets_401(client, opened, claim):
    response = _save(client, claim, notes="late")

    assert response.status_code == 401
    assert AuditSheet.objects.count() == 0


def test_submit_opens_the_next_claim(client_for, opened, reviewer_a, claim):
    evidence = _evidence(claim, 1, "Full-time employees are entitled to 25 days")

    response = client_for(reviewer_a).post(
        reverse("audit:review-submit", args=[claim.pk]),
        _form(judgment="supported", evidence=[evidence], active_seconds=40),
    )

    following = Claim.objects.get(answer__external_id="hm-1-a", order=1)
    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.url == reverse("audit:review-claim", args=[following.pk])
    assert (sheet.status, sheet.judgment, len(sheet.evidence)) == ("submitted", "supported", 1)


def test_an_incomplete_submit_keeps_what_was_entered_as_a_draft(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)

    response = client.post(
        reverse("audit:review-submit", args=[claim.pk]), _form(notes="a note to keep")
    )

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.status_code == 200
    assert response.context["problems"] == ["Choose a judgment."]
    assert (sheet.status, sheet.notes, sheet.version) == ("draft", "a note to keep", 2)
    assert '<input type="hidden" name="version" value="2">' in response.content.decode()


def test_submit_without_evidence_for_supported_says_what_is_missing(
    client_for, opened, reviewer_a, claim
):
    response = client_for(reviewer_a).post(
        reverse("audit:review-submit", args=[claim.pk]), _form(judgment="supported", notes="n")
    )

    assert response.status_code == 200
    assert response.context["problems"] == ["“Supported” needs at least one evidence sentence."]
    assert response.context["values"]["notes"] == "n"
    assert AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).status == "draft"


def test_reopen_returns_a_submitted_sheet_to_draft(client_for, opened, reviewer_a, claim):
    _submitted(reviewer_a, claim, judgment="not_supported")
    client = client_for(reviewer_a)

    response = client.post(reverse("audit:review-reopen", args=[claim.pk]))

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.url == reverse("audit:review-claim", args=[claim.pk])
    assert (sheet.status, sheet.history.count()) == ("draft", 3)
    page = client.get(response.url)
    assert page.context["submitted"] is False


def test_flag_for_guideline_update_returns_the_flag_partial(client_for, opened, reviewer_a, claim):
    response = client_for(reviewer_a).post(
        reverse("audit:flag-raise", args=[claim.pk]),
        _form(flag_comment="Does 'per year' need its own evidence?"),
        **HTMX,
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="flag-status"')
    assert "You flagged: Does &#x27;per year&#x27; need its own evidence?" in body
    assert list(GuidelineFlag.objects.values_list("comment", "raised_by__username")) == [
        ("Does 'per year' need its own evidence?", "rev_a")
    ]


# --------------------------------------------------------------- blindness, permissions


def test_reviewer_cannot_open_a_claim_not_assigned_to_them(client_for, opened, reviewer_a, claim):
    Assignment.objects.filter(claim=claim, reviewer=reviewer_a).delete()
    client = client_for(reviewer_a)

    statuses = [
        client.get(reverse("audit:review-claim", args=[claim.pk])).status_code,
        client.post(reverse("audit:review-save", args=[claim.pk]), _form()).status_code,
        client.post(reverse("audit:review-submit", args=[claim.pk]), _form()).status_code,
        client.post(reverse("audit:review-reopen", args=[claim.pk])).status_code,
        client.post(reverse("audit:flag-raise", args=[claim.pk]), _form()).status_code,
        client.get(reverse("audit:review-claim", args=[999999])).status_code,
    ]

    assert statuses == [404, 404, 404, 404, 404, 404]
    assert AuditSheet.objects.filter(reviewer=reviewer_a).count() == 0


def test_unassigned_lead_and_outsider_get_404(client_for, opened, lead, claim):
    outsider = UserFactory(username="outsider", role="reviewer")

    assert client_for(lead).get(reverse("audit:review-claim", args=[claim.pk])).status_code == 404
    assert (
        client_for(outsider).get(reverse("audit:review-claim", args=[claim.pk])).status_code == 404
    )
    assert (
        client_for(outsider).get(reverse("audit:review-continue", args=[opened.pk])).status_code
        == 404
    )


def test_reviewer_removed_from_the_set_loses_access(client_for, opened, reviewer_a, claim):
    opened.reviewers.remove(reviewer_a)

    response = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    assert response.status_code == 404


def test_reviewer_cannot_write_another_sheet_by_changing_an_id(
    client_for, opened, reviewer_a, reviewer_b, claim
):
    theirs = services.sheet_for(claim=claim, reviewer=reviewer_b)
    Assignment.objects.filter(claim=claim, reviewer=reviewer_a).delete()
    own = Claim.objects.get(answer__external_id="hm-1-a", order=1)
    client = client_for(reviewer_a)

    into_their_claim = _save(client, claim, notes="overwrite")
    with_their_ids = _save(client, own, notes="mine", sheet=theirs.pk, reviewer=reviewer_b.pk)

    theirs.refresh_from_db()
    assert (into_their_claim.status_code, with_their_ids.status_code) == (404, 200)
    assert (theirs.notes, theirs.version) == ("", 1)
    assert AuditSheet.objects.get(claim=own, reviewer=reviewer_a).notes == "mine"


def test_every_post_needs_the_csrf_token(opened, reviewer_a, claim):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer_a)
    urls = [
        reverse("audit:review-save", args=[claim.pk]),
        reverse("audit:review-submit", args=[claim.pk]),
        reverse("audit:review-reopen", args=[claim.pk]),
        reverse("audit:flag-raise", args=[claim.pk]),
        reverse("audit:claim-split", args=[claim.pk]),
        reverse("audit:review-open", args=[opened.pk]),
        reverse("audit:reviewer-replace", args=[opened.pk]),
    ]

    statuses = [client.post(url, _form(notes="x"), **HTMX).status_code for url in urls]

    assert statuses == [403] * len(urls)
    assert AuditSheet.objects.count() == 0


def test_the_review_page_carries_the_csrf_token_for_htmx(client_for, opened, reviewer_a, claim):
    body = (
        client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk])).content.decode()
    )

    assert re.search(r"<body hx-headers='\{\"x-csrftoken\": \"\w+\"\}'>", body)
    assert re.search(r'<input type="hidden" name="csrfmiddlewaretoken" value="\w+">', body)


def test_reviewer_cannot_see_other_sheet_before_submit(
    client_for, opened, reviewer_a, reviewer_b, claim
):
    secret = "B-SECRET-NOTE-7731"
    b_sheet = services.sheet_for(claim=claim, reviewer=reviewer_b)
    b_sheet = services.sheet_save(
        sheet=b_sheet,
        user=reviewer_b,
        version=1,
        data=SheetData(judgment="contradicted", notes=secret, unsupported_assertions=(secret,)),
    )
    services.guideline_flag_raise(claim=claim, user=reviewer_b, comment=secret)
    client = client_for(reviewer_a)
    home_before = [
        (s.done, s.assigned) for s, _ in client.get(reverse("audit:home")).context["my_sets"]
    ]

    page = client.get(reverse("audit:review-claim", args=[claim.pk]))
    saved = _save(client, claim, notes="mine")
    services.sheet_submit(sheet=b_sheet, user=reviewer_b, version=b_sheet.version)
    page_after_b = client.get(reverse("audit:review-claim", args=[claim.pk]))
    home_after = [
        (s.done, s.assigned) for s, _ in client.get(reverse("audit:home")).context["my_sets"]
    ]
    answer_page = client.get(claim.answer.get_absolute_url())

    for response in (page, saved, page_after_b, answer_page):
        body = response.content.decode()
        assert secret not in body
        assert "contradicted" not in body.replace('value="contradicted"', "")
    assert page.context["values"]["judgment"] == ""
    assert page_after_b.context["my_flags"] == []
    assert " checked><kbd>" not in page_after_b.content.decode()
    assert home_before == home_after == [(0, 18)]


def _sheet_panel(body: str) -> str:
    """The submitted sheet's status line and buttons, with claim ids and times blanked."""
    status = re.search(r'<span class="save-message">(.*?)</span>', body, re.S).group(1)
    actions = re.search(r'<div class="actions">(.*?)</div>', body, re.S).group(1)
    return re.sub(r"\d+", "N", " ".join((status + actions).split()))


def test_the_page_after_submitting_does_not_depend_on_the_other_sheet(
    client_for, opened, reviewer_a, reviewer_b
):
    agreed, disagreed, alone = (
        Claim.objects.get(answer__external_id="hm-1-a", order=n) for n in (1, 2, 3)
    )
    _submitted(reviewer_a, agreed, judgment="not_supported")
    _submitted(reviewer_a, disagreed, judgment="contradicted")
    client = client_for(reviewer_b)
    panels = []
    for claim in (agreed, disagreed, alone):
        client.post(
            reverse("audit:review-submit", args=[claim.pk]),
            _form(judgment="not_supported"),
        )
        page = client.get(reverse("audit:review-claim", args=[claim.pk]))
        panels.append((page.context["can_reopen"], _sheet_panel(page.content.decode())))

    assert panels[0] == panels[1] == panels[2]
    assert panels[0][0] is True
    assert panels[0][1] == (
        'Submitted N-N-N N:N. <button type="submit" class="secondary" '
        'formaction="/claims/N/review/reopen/" id="reopen-sheet">Reopen to change</button> '
        '<a href="/claims/N/review/" id="next-claim" class="button secondary">Next <kbd>n</kbd>'
        '</a> <button type="button" class="linkish" data-open="flag-box" aria-controls="flag-box">'
        "Flag…</button>"
    )


# ----------------------------------------------------------------------------- splits


def test_reviewer_split_needs_the_set_to_allow_it(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    url = reverse("audit:claim-split", args=[claim.pk])
    refused = client.get(url)
    opened.allow_reviewer_split = True
    opened.save()

    response = client.post(url, {"parts": "Full-time employees get 25 days.\nThe days are paid."})

    children = list(Claim.objects.filter(parent=claim).order_by("order"))
    assert refused.status_code == 403
    assert [c.text for c in children] == ["Full-time employees get 25 days.", "The days are paid."]
    assert response.url == reverse("audit:review-claim", args=[children[0].pk])
    page = client.get(response.url)
    assert page.context["siblings"] == 2
    assert "atomic fact 1 of 2" in page.content.decode()


def test_a_split_claims_old_address_says_where_its_parts_are(
    client_for, opened, reviewer_a, lead, claim
):
    _submitted(reviewer_a, claim, judgment="not_supported")
    children = services.claim_split(
        claim=claim, parts=[AtomicPart("Part one."), AtomicPart("Part two.")], by=lead
    )
    client = client_for(reviewer_a)

    page = client.get(reverse("audit:review-claim", args=[claim.pk]))
    home = client.get(reverse("audit:home"))

    body = page.content.decode()
    assert page.status_code == 200
    assert page.templates[0].name == "audit/claim_was_split.html"
    assert [part["claim"].pk for part in page.context["parts"]] == [c.pk for c in children]
    assert page.context["own"].pk == AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).pk
    for child in children:
        assert f'<a href="{reverse("audit:review-claim", args=[child.pk])}">' in body
    assert re.search(r'<p id="split-own-sheet">(.*?)</p>', body).group(1) == (
        "Your sheet for the whole claim is kept (submitted: Not supported); the lead sees it "
        "in the claim's history. It no longer counts towards your progress."
    )
    assert [c.pk for c in home.context["split_after_judging"]] == [claim.pk]
    assert f'href="{reverse("audit:review-claim", args=[claim.pk])}"' in home.content.decode()


def test_a_split_claims_address_is_still_404_for_someone_who_never_had_it(
    client_for, opened, lead, claim
):
    outsider = UserFactory(username="outsider", role="reviewer")
    opened.reviewers.add(outsider)
    services.claim_split(claim=claim, parts=[AtomicPart("One."), AtomicPart("Two.")], by=lead)

    response = client_for(outsider).get(reverse("audit:review-claim", args=[claim.pk]))

    assert response.status_code == 404


def test_a_reviewers_split_is_refused_once_the_other_reviewer_submitted(
    client_for, opened, reviewer_a, reviewer_b, claim
):
    opened.allow_reviewer_split = True
    opened.save()
    _submitted(reviewer_a, claim, judgment="not_supported")

    response = client_for(reviewer_b).post(
        reverse("audit:claim-split", args=[claim.pk]), {"parts": "One.\nTwo."}
    )

    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [services.splits.REVIEWER_SPLIT_REFUSED]
    assert Claim.objects.filter(parent=claim).count() == 0
    a_page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))
    assert a_page.context["submitted"] is True


def test_split_form_reads_citation_markers_per_line(client_for, opened, lead):
    parent = Claim.objects.get(answer__external_id="hm-1-a", order=1)

    response = client_for(lead).post(
        reverse("audit:claim-split", args=[parent.pk]),
        {"parts": "Part-time staff receive leave.\nIt is pro rata [2]"},
    )

    children = list(Claim.objects.filter(parent=parent).order_by("order"))
    assert response.url == reverse("audit:set-claims", args=[opened.pk])
    assert [(c.text, sorted(c.citations.values_list("position", flat=True))) for c in children] == [
        ("Part-time staff receive leave.", [1, 2]),
        ("It is pro rata", [2]),
    ]


def test_answer_is_unchanged_by_a_split(client_for, opened, lead):
    parent = Claim.objects.get(answer__external_id="hm-1-a", order=1)
    client_for(lead).post(reverse("audit:claim-split", args=[parent.pk]), {"parts": "One.\nTwo."})

    response = client_for(lead).get(Answer.objects.get(external_id="hm-1-a").get_absolute_url())

    assert len(response.context["rows"]) == 4


def test_review_page_place_and_next_claim_follow_the_queue_with_atomic_claims(
    client_for, opened, reviewer_a, lead, claim
):
    services.claim_split(
        claim=claim, parts=[AtomicPart("Part one."), AtomicPart("Part two.")], by=lead
    )
    queue = list(
        selectors.review_queue(reviewer=reviewer_a, audit_set=opened).values_list(
            "claim_id", "sheet_status"
        )
    )
    done = queue[2][0]
    AuditSheet.objects.create(
        claim_id=done, reviewer=reviewer_a, answer_statement="x", status="submitted"
    )
    # Stored directly, as an import would: count the reviewer's tally again.
    reviewer_tallies_refresh(audit_set_id=opened.pk, reviewer_ids=[reviewer_a.pk])
    client = client_for(reviewer_a)
    unfinished = [pk for pk, _ in queue if pk != done]
    answers = dict(Claim.objects.filter(pk__in=[pk for pk, _ in queue]).values_list("pk", "answer"))
    places = {}  # claim -> (place in its answer, claims of that answer)
    for pk, _ in queue:
        mine = [other for other, _ in queue if answers[other] == answers[pk]]
        places[pk] = (mine.index(pk) + 1, len(mine))

    seen = []
    for position, (pk, _) in enumerate(queue, start=1):
        context = client.get(reverse("audit:review-claim", args=[pk])).context
        seen.append(
            (context["position"], context["in_answer"], context["assigned"], context["done"])
        )
        later = [other for other in unfinished if queue.index((other, "")) > position - 1]
        expected = (later or [other for other in unfinished if other != pk] or [None])[0]
        assert context["next_url"] == (
            reverse("audit:review-claim", args=[expected]) if expected else ""
        ), position

    assert seen == [(*places[pk], len(queue), 1) for pk, _ in queue]


# ------------------------------------------------------------------- spans below sentences


def _claim_item(claim: Claim, words: str, note: str = "") -> str:
    start = claim.text.index(words)
    return json.dumps({"start": start, "end": start + len(words), "note": note})


def test_autosave_stores_passage_parts_and_claim_spans_with_notes(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    part = _evidence(claim, 1, "25 days of paid annual leave")
    note = 'says "per leave year" <b>'

    response = client.post(
        reverse("audit:review-save", args=[claim.pk]),
        {
            **_form(judgment="partially_supported", unsupported_assertions="free words\n"),
            "evidence": [part],
            "unsupported_item": [
                _claim_item(claim, "per year", note),
                _claim_item(claim, " 25 days "),
            ],
        },
        **HTMX,
    )

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert response.status_code == 200
    assert [(e["start"], e["text"]) for e in sheet.evidence] == [
        (int(part.split(":")[1]), "25 days of paid annual leave")
    ]
    assert [(a["text"], a["note"]) for a in sheet.unsupported_assertions] == [
        ("25 days", ""),
        ("per year", note),
        ("free words", ""),
    ]
    page = client.get(reverse("audit:review-claim", args=[claim.pk]))
    body = page.content.decode()
    # The part is marked in its passage and listed; the spans are marked in the claim and
    # listed with their notes, escaped.
    assert re.findall(r'<span class="pt ev" data-o="\d+">([^<]*)</span>', body) == [
        "25 days of paid annual leave"
    ]
    assert f'<input type="hidden" name="evidence" value="{part}">' in body
    assert re.findall(r'<span class="pt un(?: un-hint)?" data-o="\d+">([^<]*)</span>', body) == [
        "25 days",
        "per year",
    ]
    assert 'value="says &quot;per leave year&quot; &lt;b&gt;"' in body
    assert page.context["values"]["assertions"] == "free words"


def test_a_span_that_is_not_the_claims_text_is_refused_and_nothing_is_saved(
    client_for, opened, reviewer_a, claim
):
    bad = json.dumps({"start": 0, "end": 4, "text": "Part", "note": ""})

    response = _save(client_for(reviewer_a), claim, unsupported_item=[bad])
    garbage = _save(client_for(reviewer_a), claim, unsupported_item=["{not json"])

    assert response.status_code == 400
    assert "Unsupported-assertion text does not match the claim." in response.content.decode()
    assert garbage.status_code == 400
    assert "Unsupported spans: Not an unsupported span." in garbage.content.decode()
    assert not AuditSheet.objects.filter(claim=claim, reviewer=reviewer_a).exists()


def test_the_matchers_suggestions_are_hints_never_part_of_the_sheet(
    client_for, opened, reviewer_a, claim
):
    page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    body = page.content.decode()
    assert page.context["suggestions"] == [
        {"start": 57, "end": 65, "text": "per year"},
    ]
    assert re.findall(r'<span class="pt un-hint" data-o="57">([^<]*)</span>', body) == ["per year"]
    assert '<button type="button" class="suggestion secondary small" data-start="57"' in body
    assert 'name="unsupported_item"' not in body
    assert not AuditSheet.objects.filter(claim=claim).exists()


def test_reviewer_never_sees_the_other_reviewers_spans(
    client_for, opened, reviewer_a, reviewer_b, claim
):
    secret = "B-SPAN-NOTE-5150"
    start = claim.text.index("paid annual")
    b_sheet = services.sheet_for(claim=claim, reviewer=reviewer_b)
    services.sheet_save(
        sheet=b_sheet,
        user=reviewer_b,
        version=1,
        data=SheetData(
            judgment="partially_supported",
            unsupported_assertions=(Assertion(start=start, end=start + 11, note=secret),),
        ),
    )

    page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk]))

    body = page.content.decode()
    assert secret not in body
    assert ' un"' not in body and " un " not in body
    assert page.context["assertion_spans"] == []
    assert 'name="unsupported_item"' not in body


def test_an_empty_unsupported_list_says_none_marked_and_how_to_mark_one(
    client_for, opened, reviewer_a, claim
):
    page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk])).text

    assert '<ul class="span-list assertion-list" id="assertion-list"' in page
    assert 'aria-labelledby="unsupported-label"></ul>' in page  # empty, so the note shows
    assert "None marked: select words of the claim and press <kbd>a</kbd>" in page
