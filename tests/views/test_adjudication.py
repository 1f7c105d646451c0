"""The lead's adjudication pages: the queue, the claim with both sheets, saving gold (and
the refusal a second lead gets), a claim's history and the set's settings."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit import services
from audit.judgments import (
    CONTRADICTED,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    WRONG_CITATION,
    Assertion,
)
from audit.models import (
    Adjudication,
    Assignment,
    AuditSheet,
    Claim,
    GuidelineFlag,
    Severity,
)
from audit.services import EvidenceRef, SheetData
from tests.conftest import api_client
from tests.factories import UserFactory, claim_at, evidence_ref, submit_sheet

pytestmark = pytest.mark.django_db

FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."
HOSTILE = "<script>alert('x')</script>"


def _key(ref: EvidenceRef) -> str:
    return f"{ref.passage}:{ref.start}:{ref.end}"


@pytest.fixture
def round_(opened, reviewer_a, reviewer_b):
    """Four finished claims of hm-1-a, one of each kind, plus an unfinished one."""
    c0, c1, c2, c3 = (claim_at("hm-1-a", n) for n in range(4))
    full, part = evidence_ref(c0, 1, FULL_TIME), evidence_ref(c1, 1, PART_TIME)
    submit_sheet(reviewer_a, c0, SUPPORTED, full, seconds=40)
    submit_sheet(reviewer_b, c0, CONTRADICTED, seconds=1, notes=HOSTILE)
    submit_sheet(reviewer_a, c1, SUPPORTED, part, seconds=12)
    submit_sheet(reviewer_b, c1, PARTIAL, part, evidence_ref(c1, 1, FULL_TIME), seconds=30)
    submit_sheet(reviewer_a, c2, NOT_SUPPORTED, seconds=5)
    submit_sheet(reviewer_b, c2, NOT_SUPPORTED, seconds=7)  # identical: unanimous gold
    submit_sheet(reviewer_a, c3, PARTIAL, evidence_ref(c3, 1, FULL_TIME), seconds=9)
    submit_sheet(
        reviewer_b,
        c3,
        PARTIAL,
        evidence_ref(c3, 1, FULL_TIME),
        evidence_ref(c3, 1, PART_TIME),
        seconds=9,
    )
    submit_sheet(reviewer_a, claim_at("hm-2-a", 0), NOT_SUPPORTED)  # B has not submitted
    return {"c0": c0, "c1": c1, "c2": c2, "c3": c3}


def _queue(client, audit_set, **params):
    return client.get(reverse("audit:adjudication-queue", args=[audit_set.pk]), params)


# ----------------------------------------------------------------------------- queue


def test_queue_lists_finished_claims_by_severity(client_for, opened, round_, lead):
    response = _queue(client_for(lead), opened)

    rows = [row.record for row in response.context["table"].rows]
    assert [(r.pk, r.severity) for r in rows] == [
        (round_["c0"].pk, Severity.CONTRADICTED_VS_SUPPORTED),
        (round_["c1"].pk, Severity.JUDGMENT),
        (round_["c3"].pk, Severity.CONFIRM),
    ]
    body = response.content.decode()
    assert '<span class="sev sev-0">Contradicted vs supported</span>' in body
    assert (
        '<span class="who">B · rev_b</span> <span class="jdg jdg-contradicted">Contradicted</span>'
        in body
    )
    assert '<span class="fast">1 s ⚠ under 2 s</span>' in body
    assert "3</strong> claims waiting" in body


def test_queue_filters_by_reason_judgment_and_fast_sheets(client_for, opened, round_, lead):
    client = client_for(lead)

    def pks(**params) -> list[int]:
        return [row.record.pk for row in _queue(client, opened, **params).context["table"].rows]

    assert pks(severity=Severity.JUDGMENT) == [round_["c1"].pk]
    assert pks(judgment=PARTIAL) == [round_["c1"].pk, round_["c3"].pk]
    assert pks(fast="true") == [round_["c0"].pk]
    assert pks(system="handmade v2") == []


def test_queue_hides_names_when_adjudication_is_anonymous(client_for, opened, round_, lead):
    opened.anonymous_adjudication = True
    opened.save()

    body = _queue(client_for(lead), opened).content.decode()

    assert "rev_a" not in body and "rev_b" not in body
    assert (
        '<span class="who">B</span> <span class="jdg jdg-contradicted">Contradicted</span>' in body
    )


def test_queue_never_loads_answer_or_passage_text(client_for, opened, round_, lead):
    with CaptureQueriesContext(connection) as queries:
        _queue(client_for(lead), opened)

    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert '"audit_answer"."text"' not in sql
    assert '"audit_passage"."text"' not in sql


def test_reviewers_get_403_on_every_adjudication_page(client_for, opened, round_, reviewer_a):
    client = client_for(reviewer_a)
    claim = round_["c0"]
    urls = [
        reverse("audit:adjudication-queue", args=[opened.pk]),
        reverse("audit:adjudication-settings", args=[opened.pk]),
        reverse("audit:adjudicate", args=[claim.pk]),
        reverse("audit:claim-history", args=[claim.pk]),
    ]

    statuses = [client.get(url).status_code for url in urls]
    posted = client.post(reverse("audit:adjudicate-save", args=[claim.pk]), {"version": 0})

    assert statuses == [403, 403, 403, 403]
    assert posted.status_code == 403
    assert Adjudication.objects.filter(claim=claim).count() == 0


# ------------------------------------------------------------------------ adjudicate


def test_adjudication_page_shows_the_claim_both_sheets_and_marked_evidence(
    client_for, opened, round_, lead
):
    claim = round_["c1"]
    full, part = evidence_ref(claim, 1, FULL_TIME), evidence_ref(claim, 1, PART_TIME)

    response = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk]))

    body = response.content.decode()
    ctx = response.context
    assert [(c["letter"], c["name"], c["judgment"]) for c in ctx["sheets"]] == [
        ("A", "rev_a", "Supported"),
        ("B", "rev_b", "Partially supported"),
    ]
    assert '<mark class="claim current">Part-time staff receive leave pro rata </mark>' in body
    # Both chose the part-time sentence (the matcher's hint too); only B the full-time one.
    # Gold starts from what both chose, with no judgment while they differ.
    assert (
        f'<label class="gold-sent ev-a ev-b mh"><input type="checkbox" name="evidence" '
        f'value="{_key(part)}" checked><span class="badge badge-a" title="Reviewer A chose '
        f'this sentence">A</span><span class="badge badge-b" title="Reviewer B chose this '
        f'sentence">B</span><span class="pt ev-a ev-b" data-o="{part.start}">{PART_TIME}'
        "</span></label>"
    ) in body
    assert f'value="{_key(full)}"><span class="badge badge-b"' in body
    assert ctx["values"]["evidence"] == {(part.passage, part.start, part.end)}
    assert (ctx["values"]["judgment"], ctx["version"], ctx["needs_reason"]) == ("", 0, True)
    assert '<select name="reason" id="id_reason" required>' in body
    assert 'id="take-a"' in body and 'id="take-b"' in body


def test_gold_starts_with_only_the_evidence_and_assertions_every_sheet_chose(
    client_for, opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 0)
    full = evidence_ref(claim, 1, FULL_TIME)
    faq = evidence_ref(claim, 2, "Part-time staff: entitlement is calculated pro rata.")
    submit_sheet(reviewer_a, claim, SUPPORTED, full, unsupported_assertions=("per year",))
    submit_sheet(
        reviewer_b,
        claim,
        WRONG_CITATION,
        full,
        faq,
        wrong_citation_passage=2,
        unsupported_assertions=("per year", "paid"),
    )

    response = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk]))

    values = response.context["values"]
    assert values["evidence"] == {(full.passage, full.start, full.end)}
    assert (values["judgment"], values["wrong"], values["assertions"]) == ("", "", "per year")


def test_wrong_citation_gold_refuses_the_evidence_left_in_a_cited_passage(
    client_for, opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 0)
    full = evidence_ref(claim, 1, FULL_TIME)
    submit_sheet(reviewer_a, claim, SUPPORTED, full)
    submit_sheet(reviewer_b, claim, WRONG_CITATION, full, wrong_citation_passage=2)

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[claim.pk]),
        {
            "version": 0,
            "judgment": WRONG_CITATION,
            "evidence": [_key(full)],
            "wrong_citation_passage": "2",
            "reason": "other",
        },
    )

    assert response.status_code == 200
    assert response.context["problems"] == [
        "“Wrong citation” says the cited passages do not support the claim: untick "
        f"“{FULL_TIME}” in cited passage [1], or choose another judgment."
    ]
    assert Adjudication.objects.filter(claim=claim).count() == 0


def test_adjudication_page_escapes_reviewer_text_and_can_hide_names(
    client_for, opened, round_, lead
):
    opened.anonymous_adjudication = True
    opened.save()

    body = client_for(lead).get(reverse("audit:adjudicate", args=[round_["c0"].pk])).content
    body = body.decode()

    assert HOSTILE not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
    assert "rev_a" not in body and "rev_b" not in body
    assert '<span class="flag fast">⚠ under 2 s</span>' in body


def test_take_b_saves_gold_and_opens_the_next_claim(client_for, opened, round_, lead):
    c0 = round_["c0"]
    b = AuditSheet.objects.get(claim=c0, reviewer__username="rev_b")

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[c0.pk]),
        {"version": 0, "take": b.pk, "reason": "reviewer_error", "note": "A misread"},
    )

    assert response.url == reverse("audit:adjudicate", args=[round_["c1"].pk])
    gold = Adjudication.objects.get(claim=c0)
    assert (gold.source, gold.judgment, gold.from_sheet, gold.lead, gold.note) == (
        "sheet",
        CONTRADICTED,
        b,
        lead,
        "A misread",
    )


def test_an_edited_version_with_a_flag(client_for, opened, round_, lead):
    c1 = round_["c1"]
    part = evidence_ref(c1, 1, PART_TIME)

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[c1.pk]),
        {
            "version": 0,
            "judgment": PARTIAL,
            "evidence": [_key(part)],
            "unsupported_assertions": "staff\n",
            "verification_worthy": "on",
            "reason": "both_partly_right",
            "flag": "on",
            "note": "Staff vs employees again.",
        },
    )

    assert response.status_code == 302
    gold = Adjudication.objects.get(claim=c1)
    assert (gold.source, gold.judgment, gold.unsupported_assertions) == (
        "edited",
        PARTIAL,
        [{"text": "staff", "start": None, "end": None, "note": ""}],
    )
    assert [e["text"] for e in gold.evidence] == [PART_TIME]
    assert list(GuidelineFlag.objects.values_list("comment", flat=True)) == [
        "Staff vs employees again."
    ]


def test_the_last_claim_returns_to_an_empty_queue(client_for, opened, round_, lead):
    client = client_for(lead)
    for key, reason in (("c0", "other"), ("c1", "other"), ("c3", "")):
        claim = round_[key]
        a = AuditSheet.objects.get(claim=claim, reviewer__username="rev_a")
        response = client.post(
            reverse("audit:adjudicate-save", args=[claim.pk]),
            {"version": 0, "take": a.pk, "reason": reason},
        )

    assert response.url == reverse("audit:adjudication-queue", args=[opened.pk])
    assert _queue(client, opened).context["table"].paginator.count == 0


def test_a_second_lead_gets_a_409_page_and_nothing_is_overwritten(
    client_for, opened, round_, lead, client
):
    other = UserFactory(username="lead2", role="lead")
    c0 = round_["c0"]
    a = AuditSheet.objects.get(claim=c0, reviewer__username="rev_a")
    b = AuditSheet.objects.get(claim=c0, reviewer__username="rev_b")
    url = reverse("audit:adjudicate-save", args=[c0.pk])
    # Both leads loaded the page while the claim had no gold: version 0 on both forms.
    services.adjudication_save(claim=c0, lead=other, version=0, take=a.pk, reason="other")

    response = client_for(lead).post(url, {"version": 0, "take": b.pk, "reason": "other"})

    body = response.content.decode()
    assert response.status_code == 409
    assert "Not saved: another lead was first." in body
    assert "(now version 1, by lead2)" in body
    gold = Adjudication.objects.get(claim=c0)
    assert (gold.from_sheet, gold.lead, gold.version) == (a, other, 1)


def test_a_missing_reason_keeps_the_lead_on_the_page(client_for, opened, round_, lead):
    c0 = round_["c0"]
    a = AuditSheet.objects.get(claim=c0, reviewer__username="rev_a")

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[c0.pk]),
        {"version": 0, "take": a.pk, "note": "kept"},
    )

    assert response.status_code == 400
    assert response.context["problems"] == ["Choose a reason code: the reviewers disagreed."]
    assert response.context["values"]["note"] == "kept"
    assert Adjudication.objects.count() == 1  # the unanimous one only


def test_unanimous_gold_can_be_opened_and_edited(client_for, opened, round_, lead):
    c2 = round_["c2"]
    client = client_for(lead)

    page = client.get(reverse("audit:adjudicate", args=[c2.pk]))
    response = client.post(
        reverse("audit:adjudicate-save", args=[c2.pk]),
        {"version": 1, "judgment": CONTRADICTED, "reason": "other", "note": "Source says so."},
    )

    assert (page.context["version"], page.context["values"]["judgment"]) == (1, NOT_SUPPORTED)
    assert response.status_code == 302
    gold = Adjudication.objects.get(claim=c2)
    assert (gold.source, gold.judgment, gold.version, gold.lead) == (
        "edited",
        CONTRADICTED,
        2,
        lead,
    )


# --------------------------------------------------------------------------- history


def test_history_lists_every_version_of_sheets_and_gold(client_for, opened, round_, lead):
    c0 = round_["c0"]
    a = AuditSheet.objects.get(claim=c0, reviewer__username="rev_a")
    services.adjudication_save(claim=c0, lead=lead, version=0, take=a.pk, reason="other")
    services.adjudication_save(
        claim=c0,
        lead=lead,
        version=1,
        data=services.GoldData(judgment=NOT_SUPPORTED),
        reason="ambiguous_source",
    )

    response = client_for(lead).get(reverse("audit:claim-history", args=[c0.pk]))

    tracks = response.context["tracks"]
    assert [t.title for t in tracks] == ["Sheet A · rev_a", "Sheet B · rev_b", "Gold record"]
    sheet_a = tracks[0].versions
    assert [(v.kind, v.who) for v in sheet_a] == [
        ("created", "rev_a · v1"),
        ("changed", "rev_a · v2"),
    ]
    assert [(c.field, c.old, c.new) for c in sheet_a[1].changes] == [
        ("active_seconds", "0", "40"),
        ("evidence", "—", f"[1] {FULL_TIME}"),
        ("judgment", "—", "Supported"),
        ("status", "draft", "submitted"),
        ("submitted_at", "—", a.submitted_at.strftime("%Y-%m-%d %H:%M:%S")),
    ]
    gold = tracks[2].versions
    assert [(v.kind, v.who) for v in gold] == [("created", "lead · v1"), ("changed", "lead · v2")]
    assert [(c.field, c.old, c.new) for c in gold[1].changes] == [
        ("evidence", f"[1] {FULL_TIME}", "—"),
        ("from_sheet", "sheet A", "—"),
        ("judgment", "Supported", "Not supported"),
        ("reason", "Other", "Ambiguous source"),
        ("source", "Taken from a sheet", "Edited by the lead"),
    ]
    body = response.content.decode()
    assert HOSTILE not in body


def test_history_hides_reviewer_names_when_anonymous(client_for, opened, round_, lead):
    opened.anonymous_adjudication = True
    opened.save()

    response = client_for(lead).get(reverse("audit:claim-history", args=[round_["c0"].pk]))

    tracks = response.context["tracks"]
    assert [t.title for t in tracks] == ["Sheet A", "Sheet B"]
    assert [v.who for v in tracks[1].versions] == ["Reviewer B · v1", "Reviewer B · v2"]
    assert "rev_b" not in response.content.decode()


def test_claims_table_links_to_adjudication_and_history(client_for, opened, round_, lead):
    body = (
        client_for(lead)
        .get(reverse("audit:set-claims", args=[opened.pk]), {"status": "disagreement"})
        .content.decode()
    )

    c0 = round_["c0"]
    assert (
        f'<a href="/claims/{c0.pk}/adjudicate/">Adjudicate</a> · '
        f'<a href="/claims/{c0.pk}/history/">History</a>'
    ) in body


# -------------------------------------------------------------------------- settings


def test_settings_form_saves_and_compares_again(client_for, opened, round_, lead):
    response = client_for(lead).post(
        reverse("audit:adjudication-settings", args=[opened.pk]),
        {"evidence_jaccard_threshold": "0.75", "anonymous_adjudication": "on"},
    )

    opened.refresh_from_db()
    assert response.url == reverse("audit:adjudication-queue", args=[opened.pk])
    assert (opened.auto_gold, opened.evidence_jaccard_threshold, opened.anonymous_adjudication) == (
        False,
        0.75,
        True,
    )
    round_["c3"].refresh_from_db()
    assert round_["c3"].severity == Severity.EVIDENCE


def test_settings_form_refuses_a_threshold_above_one(client_for, opened, lead):
    response = client_for(lead).post(
        reverse("audit:adjudication-settings", args=[opened.pk]),
        {"auto_gold": "on", "evidence_jaccard_threshold": "1.5"},
    )

    assert response.status_code == 200
    assert response.context["form"].errors == {
        "evidence_jaccard_threshold": ["Ensure this value is less than or equal to 1.0."]
    }
    assert re.search(r"Unanimous sheets become gold", response.content.decode())


def test_queue_and_adjudication_page_queries_do_not_grow_with_the_queue(
    client_for, opened, round_, lead, reviewer_a, reviewer_b
):
    client = client_for(lead)

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries.captured_queries)

    queue_url = reverse("audit:adjudication-queue", args=[opened.pk])
    page_url = reverse("audit:adjudicate", args=[round_["c0"].pk])
    before = (count(queue_url), count(page_url))
    for claim in Claim.objects.filter(answer__external_id__in=["hm-3-a", "hm-4-a"]):
        submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
        submit_sheet(reviewer_b, claim, CONTRADICTED)

    assert _queue(client, opened).context["table"].paginator.count == 3 + 5
    assert (count(queue_url), count(page_url)) == before


def test_the_lead_sees_which_sheet_was_reopened_after_every_sheet_was_in(
    client_for, opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 3)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED, seconds=30)
    sheet = submit_sheet(reviewer_b, claim, CONTRADICTED, seconds=30)
    sheet = services.sheet_reopen(sheet=sheet, user=reviewer_b)
    services.sheet_submit(
        sheet=sheet, user=reviewer_b, version=sheet.version, data=SheetData(judgment=NOT_SUPPORTED)
    )

    body = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk])).content.decode()

    assert re.findall(r'<span class="flag reopened">(.*?)</span>', body) == [
        "⚠ reopened after every sheet was in"
    ]


# ------------------------------------------------------------------ number override

RESIGN = "An employee who wishes to resign must give four weeks' written notice to Human Resources."


@pytest.fixture
def four_weeks(opened, reviewer_a, reviewer_b):
    """hm-2-a claim 0 says "4 weeks' notice"; its sources say "four weeks'": 4 is ungrounded."""
    claim = claim_at("hm-2-a", 0)
    submit_sheet(reviewer_a, claim, SUPPORTED, evidence_ref(claim, 1, RESIGN))
    submit_sheet(reviewer_b, claim, PARTIAL, evidence_ref(claim, 1, RESIGN))
    return claim


def test_adjudication_page_offers_the_number_override_for_an_ungrounded_number(
    client_for, four_weeks, lead
):
    body = client_for(lead).get(reverse("audit:adjudicate", args=[four_weeks.pk])).text

    assert '<span class="num-token ungrounded">4 ✗</span>' in body
    assert (
        '<input type="checkbox" name="numbers_overridden" id="id_numbers_overridden" value="on">'
        in body
    )


def test_an_override_without_a_reason_keeps_the_lead_on_the_page(client_for, four_weeks, lead):
    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[four_weeks.pk]),
        {
            "version": 0,
            "judgment": SUPPORTED,
            "evidence": [_key(evidence_ref(four_weeks, 1, RESIGN))],
            "reason": "other",
            "numbers_overridden": "on",
            "numbers_override_reason": "",
        },
    )

    assert response.status_code == 400
    assert response.context["problems"] == [
        "Why the numbers hold: Say why the number check is overridden."
    ]
    assert Adjudication.objects.filter(claim=four_weeks).count() == 0


def test_gold_stores_the_number_override_with_its_reason(client_for, four_weeks, lead):
    client = client_for(lead)

    response = client.post(
        reverse("audit:adjudicate-save", args=[four_weeks.pk]),
        {
            "version": 0,
            "judgment": SUPPORTED,
            "evidence": [_key(evidence_ref(four_weeks, 1, RESIGN))],
            "reason": "other",
            "numbers_overridden": "on",
            "numbers_override_reason": "[1] says “four weeks”",
        },
    )

    assert response.status_code == 302
    gold = Adjudication.objects.get(claim=four_weeks)
    assert (gold.numbers_overridden, gold.numbers_override_reason) == (
        True,
        "[1] says “four weeks”",
    )
    page = client.get(reverse("audit:adjudicate", args=[four_weeks.pk]))
    assert page.context["values"]["numbers_overridden"] is True
    assert "number check overridden" in page.text


# ------------------------------------------------------------------- spans below sentences


def _span(claim: Claim, words: str, note: str = "") -> Assertion:
    start = claim.text.index(words)
    return Assertion(text=words, start=start, end=start + len(words), note=note)


@pytest.fixture
def span_claim(opened, reviewer_a, reviewer_b):
    """hm-1-a claim 0, partially supported by both, on overlapping words and spans."""
    claim = claim_at("hm-1-a", 0)
    submit_sheet(
        reviewer_a,
        claim,
        PARTIAL,
        evidence_ref(claim, 1, "25 days of paid annual leave"),
        unsupported_assertions=(_span(claim, "per year", HOSTILE), "Free <i>text</i>"),
        seconds=30,
    )
    submit_sheet(
        reviewer_b,
        claim,
        PARTIAL,
        evidence_ref(claim, 1, "entitled to 25 days"),
        unsupported_assertions=(_span(claim, "annual leave per year", "leave year"),),
        seconds=30,
    )
    return claim


def test_adjudication_marks_each_sheets_spans_and_where_they_overlap(client_for, span_claim, lead):
    response = client_for(lead).get(reverse("audit:adjudicate", args=[span_claim.pk]))

    body = response.content.decode()
    pieces = re.findall(r'<span class="pt([^"]*)" data-o="\d+">([^<]*)</span>', body)
    claim_pieces = re.search(r'id="claim-statement">(.*?)</p>', body).group(1)
    assert re.findall(r'<span class="pt([^"]*)" data-o="\d+">([^<]*)</span>', claim_pieces) == [
        ("", "Full-time employees receive 25 days of paid "),
        (" un-b", "annual leave "),
        (" un-a un-b", "per year"),
        ("", "."),
    ]
    assert (" ev-a ev-b", "25 days") in pieces
    assert (" ev-b", "entitled to ") in pieces
    assert (" ev-a", " of paid annual leave") in pieces
    # Escaped everywhere: the note, the free text and the JSON a checkbox posts back.
    assert HOSTILE not in body and "<i>text</i>" not in body
    assert "— &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</span>" in body
    candidates = response.context["assertion_candidates"]
    assert [(c["text"], [b.letter for b in c["by"]], c["checked"]) for c in candidates] == [
        ("annual leave per year", ["B"], False),
        ("per year", ["A"], False),
    ]
    assert response.context["severity"] == "Evidence differs"


def test_gold_keeps_the_spans_the_lead_ticks_with_their_notes(client_for, span_claim, lead):
    candidates = (
        client_for(lead)
        .get(reverse("audit:adjudicate", args=[span_claim.pk]))
        .context["assertion_candidates"]
    )
    a_span = next(c for c in candidates if [b.letter for b in c["by"]] == ["A"])
    b_part = evidence_ref(span_claim, 1, "entitled to 25 days")

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[span_claim.pk]),
        {
            "version": 0,
            "judgment": PARTIAL,
            "evidence": [_key(b_part)],
            "unsupported_item": [a_span["json"]],
            "unsupported_assertions": "free <i>text</i>\n",
            "verification_worthy": "on",
            "reason": "both_partly_right",
        },
    )

    assert response.status_code == 302
    gold = Adjudication.objects.get(claim=span_claim)
    start = span_claim.text.index("per year")
    assert gold.unsupported_assertions == [
        {"text": "per year", "start": start, "end": start + 8, "note": HOSTILE},
        {"text": "free <i>text</i>", "start": None, "end": None, "note": ""},
    ]
    assert [e["text"] for e in gold.evidence] == ["entitled to 25 days"]


def test_gold_refuses_a_span_whose_text_is_not_the_claims(client_for, span_claim, lead):
    moved = json.dumps({"start": 0, "end": 8, "text": "per year", "note": ""})

    response = client_for(lead).post(
        reverse("audit:adjudicate-save", args=[span_claim.pk]),
        {
            "version": 0,
            "judgment": PARTIAL,
            "evidence": [_key(evidence_ref(span_claim, 1, "entitled to 25 days"))],
            "unsupported_item": [moved],
            "reason": "other",
        },
    )

    assert response.status_code == 400
    assert "Unsupported-assertion text does not match the claim." in response.content.decode()
    assert not Adjudication.objects.filter(claim=span_claim).exists()


def test_take_a_keeps_that_sheets_spans_and_notes(client_for, span_claim, lead, reviewer_a):
    a = AuditSheet.objects.get(claim=span_claim, reviewer=reviewer_a)

    client_for(lead).post(
        reverse("audit:adjudicate-save", args=[span_claim.pk]),
        {"version": 0, "take": a.pk, "reason": "reviewer_error"},
    )

    gold = Adjudication.objects.get(claim=span_claim)
    assert (gold.evidence, gold.unsupported_assertions) == (a.evidence, a.unsupported_assertions)
    assert gold.unsupported_assertions[0]["note"] == HOSTILE


def test_a_reviewer_keeps_one_letter_on_every_claim_of_the_set(client_for, opened, lead):
    """Letters go by who first wrote a sheet in the set: rev_b judges first here, so rev_b
    is "A" and rev_a "B" on every claim, whichever sheet comes first on a claim's page; the
    colours still go by place on the page."""
    rev_c = UserFactory(username="rev_c", role="reviewer")
    first, second = claim_at("hm-1-a", 0), claim_at("hm-1-a", 1)
    reviewer_b = opened.reviewers.get(username="rev_b")
    reviewer_a = opened.reviewers.get(username="rev_a")
    # rev_c takes rev_b's place on the second claim before anyone judges it.
    Assignment.objects.filter(claim=second, reviewer=reviewer_b).update(reviewer=rev_c)
    submit_sheet(reviewer_b, first, "supported", evidence_ref(first, 1, FULL_TIME))
    submit_sheet(reviewer_a, first, "not_supported")
    submit_sheet(rev_c, second, "contradicted")
    submit_sheet(reviewer_a, second, "not_supported")

    letters = {}
    for claim in (first, second):
        cards = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk])).context["sheets"]
        letters[claim.pk] = {c["sheet"].reviewer.username: (c["letter"], c["style"]) for c in cards}

    assert letters[first.pk] == {"rev_b": ("A", "a"), "rev_a": ("B", "b")}
    # On the second claim rev_c's sheet comes first on the page (colour "a"), yet rev_a is
    # still "B" and rev_c "C".
    assert letters[second.pk] == {"rev_c": ("C", "a"), "rev_a": ("B", "b")}
    # The queue, on the page and through the API, names them the same way.
    queue = api_client(lead).get(f"/api/v1/sets/{opened.pk}/adjudication").json()["items"]
    assert {row["claim"]: sorted(s["letter"] for s in row["sheets"]) for row in queue} == {
        first.pk: ["A", "B"],
        second.pk: ["B", "C"],
    }


def test_the_same_gold_save_sent_again_is_one_save_and_another_tabs_is_refused(
    client_for, opened, round_, lead
):
    c1 = round_["c1"]
    part = evidence_ref(c1, 1, PART_TIME)
    full = evidence_ref(c1, 1, FULL_TIME)
    client = client_for(lead)
    url = reverse("audit:adjudicate-save", args=[c1.pk])
    posted = {"version": 0, "judgment": PARTIAL, "evidence": [_key(part)], "reason": "other"}

    first = client.post(url, posted)
    again = client.post(url, posted)  # its answer was lost: sent once more
    # Another tab of the same lead over the same version: same judgment, other evidence.
    other = client.post(url, {**posted, "evidence": [_key(part), _key(full)]})

    assert (first.status_code, again.status_code, other.status_code) == (302, 302, 409)
    assert again.url == first.url
    gold = Adjudication.objects.get(claim=c1)
    assert gold.version == 1
    assert [e["text"] for e in gold.evidence] == [PART_TIME]
    assert gold.history.count() == 1
