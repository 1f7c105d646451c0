"""Comparing finished sheets (unanimous gold or a place in the queue), the lead's gold
record with its version check, and the set's adjudication settings."""

import threading

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection

from audit import agreement, services
from audit.judgments import (
    CONTRADICTED,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    WRONG_CITATION,
    Assertion,
)
from audit.models import Adjudication, AuditSheet, Claim, GuidelineFlag, Severity
from audit.services import (
    GoldData,
    ReviewError,
    SheetData,
    SheetIncomplete,
    StaleAdjudication,
)
from tests.factories import UserFactory, claim_at, evidence_ref, submit_sheet

pytestmark = pytest.mark.django_db

FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."


@pytest.fixture
def other_lead(db):
    return UserFactory(username="lead2", role="lead")


def _state(claim: Claim) -> tuple:
    claim.refresh_from_db()
    gold = Adjudication.objects.filter(claim=claim).first()
    return claim.severity, gold.source if gold else None


# ------------------------------------------------------------------------ comparing


def test_queue_severities_mirror_the_pure_core():
    assert [(s.name, s.value) for s in agreement.Severity] == [
        (s.name, s.value) for s in Severity if s != Severity.CONFIRM
    ]
    assert max(agreement.Severity) < Severity.CONFIRM


def test_identical_sheets_become_unanimous_gold_linked_to_both(opened, reviewer_a, reviewer_b):
    claim = claim_at("hm-1-a", 0)
    a = submit_sheet(
        reviewer_a,
        claim,
        SUPPORTED,
        evidence_ref(claim, 1, FULL_TIME),
        unsupported_assertions=(" Per  year",),
    )
    assert _state(claim) == (None, None)

    b = submit_sheet(
        reviewer_b,
        claim,
        SUPPORTED,
        evidence_ref(claim, 1, FULL_TIME),
        unsupported_assertions=("per year",),
        verification_worthy=False,
    )

    gold = Adjudication.objects.get(claim=claim)
    assert (gold.source, gold.judgment, gold.lead, gold.from_sheet, gold.version) == (
        "unanimous",
        SUPPORTED,
        None,
        None,
        1,
    )
    assert [e["text"] for e in gold.evidence] == [FULL_TIME]
    # The same assertion by its trimmed, casefolded text: the first sheet's wording is kept.
    assert (gold.unsupported_assertions, gold.verification_worthy) == (
        [{"text": "Per  year", "start": None, "end": None, "note": ""}],
        True,
    )
    assert sorted(gold.sheets.values_list("pk", flat=True)) == [a.pk, b.pk]
    assert list(gold.history.values_list("history_type", "source")) == [("+", "unanimous")]
    assert _state(claim) == (None, "unanimous")


def _claim_span(claim: Claim, words: str, note: str = "") -> Assertion:
    start = claim.text.index(words)
    return Assertion(text=words, start=start, end=start + len(words), note=note)


def test_sheets_with_different_unsupported_spans_go_to_the_lead(opened, reviewer_a, reviewer_b):
    claim = claim_at("hm-1-a", 0)
    ref = evidence_ref(claim, 1, FULL_TIME)
    submit_sheet(
        reviewer_a, claim, PARTIAL, ref, unsupported_assertions=(_claim_span(claim, "per year"),)
    )
    submit_sheet(
        reviewer_b,
        claim,
        PARTIAL,
        ref,
        unsupported_assertions=(_claim_span(claim, "annual leave per year"),),
    )

    assert _state(claim) == (Severity.ASSERTIONS, None)
    assert Severity(claim.severity).label == "Unsupported spans differ"


def test_the_same_unsupported_spans_with_other_notes_make_unanimous_gold_with_both_notes(
    opened, reviewer_a, reviewer_b
):
    claim = claim_at("hm-1-a", 0)
    ref = evidence_ref(claim, 1, FULL_TIME)
    submit_sheet(
        reviewer_a,
        claim,
        PARTIAL,
        ref,
        unsupported_assertions=(_claim_span(claim, "per year", "leave year"),),
    )
    submit_sheet(
        reviewer_b,
        claim,
        PARTIAL,
        ref,
        unsupported_assertions=(_claim_span(claim, "per year", "not calendar"),),
    )

    gold = Adjudication.objects.get(claim=claim)
    start = claim.text.index("per year")
    assert gold.unsupported_assertions == [
        {"text": "per year", "start": start, "end": start + 8, "note": "leave year; not calendar"}
    ]


def test_reopening_withdraws_unanimous_gold_and_the_resubmitted_claim_goes_to_a_lead(
    opened, reviewer_a, reviewer_b
):
    claim = claim_at("hm-1-a", 3)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    sheet = submit_sheet(reviewer_b, claim, NOT_SUPPORTED)
    assert _state(claim) == (None, "unanimous")

    sheet = services.sheet_reopen(sheet=sheet, user=reviewer_b)
    assert _state(claim) == (None, None)
    assert list(
        Adjudication.history.filter(claim_id=claim.pk)
        .order_by("history_id")
        .values_list("history_type", "history_change_reason", "history_user")
    ) == [("+", "unanimous", None), ("-", "withdrawn: a sheet was reopened", None)]

    services.sheet_submit(sheet=sheet, user=reviewer_b, version=sheet.version)

    assert _state(claim) == (Severity.CONFIRM, None)


def test_a_sheet_reopened_after_both_were_in_never_makes_unanimous_gold(
    opened, reviewer_a, reviewer_b
):
    claim = claim_at("hm-1-a", 3)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    sheet = submit_sheet(reviewer_b, claim, CONTRADICTED)
    assert _state(claim) == (Severity.JUDGMENT, None)

    sheet = services.sheet_reopen(sheet=sheet, user=reviewer_b)
    services.sheet_submit(
        sheet=sheet, user=reviewer_b, version=sheet.version, data=SheetData(judgment=NOT_SUPPORTED)
    )

    assert _state(claim) == (Severity.CONFIRM, None)
    assert AuditSheet.objects.get(pk=sheet.pk).reopened_after_all_in is True


def test_a_sheet_reopened_before_the_other_was_in_can_still_agree_unanimously(
    opened, reviewer_a, reviewer_b
):
    claim = claim_at("hm-1-a", 3)
    sheet = submit_sheet(reviewer_a, claim, CONTRADICTED)
    sheet = services.sheet_reopen(sheet=sheet, user=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=sheet.version, data=SheetData(judgment=NOT_SUPPORTED)
    )

    submit_sheet(reviewer_b, claim, NOT_SUPPORTED)

    assert _state(claim) == (None, "unanimous")
    assert AuditSheet.objects.get(pk=sheet.pk).reopened_after_all_in is False


def test_reviewers_cannot_reopen_once_a_lead_decided_unanimous_gold(
    opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 3)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    sheet = submit_sheet(reviewer_b, claim, NOT_SUPPORTED)
    services.adjudication_save(claim=claim, lead=lead, version=1, take=sheet.pk)

    with pytest.raises(ReviewError) as error:
        services.sheet_reopen(sheet=sheet, user=reviewer_b)

    assert str(error.value) == "This claim is adjudicated; its sheets can no longer change."


@pytest.mark.parametrize(
    ("a", "b", "severity"),
    [
        (SUPPORTED, CONTRADICTED, Severity.CONTRADICTED_VS_SUPPORTED),
        (SUPPORTED, PARTIAL, Severity.JUDGMENT),
        (NOT_SUPPORTED, CONTRADICTED, Severity.JUDGMENT),
    ],
)
def test_different_judgments_wait_for_a_lead_by_severity(
    opened, reviewer_a, reviewer_b, a, b, severity
):
    claim = claim_at("hm-1-a", 0)
    evidence = evidence_ref(claim, 1, FULL_TIME)
    submit_sheet(reviewer_a, claim, a, *([evidence] if a in (SUPPORTED, PARTIAL) else []))
    submit_sheet(reviewer_b, claim, b, *([evidence] if b in (SUPPORTED, PARTIAL) else []))

    assert _state(claim) == (severity, None)


def test_a_different_right_passage_is_a_disagreement(opened, reviewer_a, reviewer_b):
    claim = claim_at("hm-3-a", 1)
    cited = set(claim.citations.values_list("position", flat=True))
    first, second = [n for n in (1, 2, 3) if n not in cited]

    submit_sheet(reviewer_a, claim, WRONG_CITATION, wrong_citation_passage=first)
    submit_sheet(reviewer_b, claim, WRONG_CITATION, wrong_citation_passage=second)

    assert _state(claim) == (Severity.WRONG_PASSAGE, None)


def test_evidence_overlap_below_the_threshold_is_a_disagreement(
    opened, reviewer_a, reviewer_b, lead
):
    claim = claim_at("hm-1-a", 1)
    one, two = evidence_ref(claim, 1, FULL_TIME), evidence_ref(claim, 1, PART_TIME)
    submit_sheet(reviewer_a, claim, PARTIAL, one)
    submit_sheet(reviewer_b, claim, PARTIAL, one, two)
    # Jaccard 1/2 is not below the default threshold of 0.5: they agree, not identically.
    assert _state(claim) == (Severity.CONFIRM, None)
    assert claim.evidence_jaccard == 0.5

    summary = services.adjudication_settings_update(
        audit_set=opened,
        by=lead,
        auto_gold=True,
        evidence_jaccard_threshold=0.6,
        anonymous_adjudication=False,
    )

    assert summary == services.CompareSummary(compared=1, unanimous=0, queued=1)
    assert _state(claim) == (Severity.EVIDENCE, None)


def test_without_auto_gold_identical_sheets_wait_to_be_confirmed(
    opened, reviewer_a, reviewer_b, lead
):
    opened.auto_gold = False
    opened.save()
    claim = claim_at("hm-1-a", 3)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    submit_sheet(reviewer_b, claim, NOT_SUPPORTED)
    assert _state(claim) == (Severity.CONFIRM, None)

    summary = services.adjudication_settings_update(
        audit_set=opened,
        by=lead,
        auto_gold=True,
        evidence_jaccard_threshold=0.5,
        anonymous_adjudication=True,
    )

    opened.refresh_from_db()
    assert summary == services.CompareSummary(compared=1, unanimous=1, queued=0)
    assert _state(claim) == (None, "unanimous")
    assert (opened.auto_gold, opened.anonymous_adjudication) == (True, True)


def test_settings_save_compares_only_finished_or_queued_claims(
    opened, reviewer_a, reviewer_b, lead, monkeypatch
):
    # A claim still waiting on a reviewer cannot change outcome: reading it would make a
    # half-reviewed set of 100k claims cost seconds per settings save.
    from audit.services import disagreements

    opened.auto_gold = False
    opened.save()
    finished, waiting = claim_at("hm-1-a", 0), claim_at("hm-1-a", 1)
    submit_sheet(reviewer_a, finished, NOT_SUPPORTED)
    submit_sheet(reviewer_b, finished, NOT_SUPPORTED)
    submit_sheet(reviewer_a, waiting, NOT_SUPPORTED)
    compared = []
    real = disagreements.claims_compare

    def recording(*, claim_ids):
        ids = sorted(claim_ids)
        compared.append(ids)
        return real(claim_ids=ids)

    monkeypatch.setattr(disagreements, "claims_compare", recording)

    summary = services.adjudication_settings_update(
        audit_set=opened,
        by=lead,
        auto_gold=True,
        evidence_jaccard_threshold=0.5,
        anonymous_adjudication=False,
    )

    assert compared == [[finished.pk]]
    assert summary == services.CompareSummary(compared=1, unanimous=1, queued=0)
    assert _state(finished) == (None, "unanimous")
    assert _state(waiting) == (None, None)


def test_settings_need_a_lead_and_a_jaccard_between_0_and_1(opened, reviewer_a, lead):
    with pytest.raises(PermissionDenied):
        services.adjudication_settings_update(
            audit_set=opened,
            by=reviewer_a,
            auto_gold=False,
            evidence_jaccard_threshold=0.5,
            anonymous_adjudication=False,
        )
    with pytest.raises(ReviewError) as error:
        services.adjudication_settings_update(
            audit_set=opened,
            by=lead,
            auto_gold=False,
            evidence_jaccard_threshold=1.5,
            anonymous_adjudication=False,
        )
    assert str(error.value) == "The evidence threshold is a Jaccard index, between 0 and 1."


def test_reopening_takes_a_claim_out_of_the_queue(opened, reviewer_a, reviewer_b):
    claim = claim_at("hm-1-a", 0)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    sheet = submit_sheet(reviewer_b, claim, CONTRADICTED)
    assert _state(claim) == (Severity.JUDGMENT, None)

    services.sheet_reopen(sheet=sheet, user=reviewer_b)

    assert _state(claim) == (None, None)


def test_a_new_reviewer_takes_a_claim_out_of_the_queue(opened, reviewer_a, reviewer_b, lead):
    claim = claim_at("hm-1-a", 0)
    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
    submit_sheet(reviewer_b, claim, CONTRADICTED)
    carol = UserFactory(username="carol", role="reviewer")

    services.review_open(
        audit_set=opened, reviewers=[reviewer_a, reviewer_b, carol], overlap=3, by=lead
    )
    assert _state(claim) == (None, None)

    submit_sheet(carol, claim, CONTRADICTED)
    assert _state(claim) == (Severity.JUDGMENT, None)


def test_a_lone_sheet_with_overlap_one_is_confirmed_by_a_lead(handmade, reviewer_a, lead):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a], overlap=1, by=lead)
    claim = claim_at("hm-1-a", 3)

    submit_sheet(reviewer_a, claim, NOT_SUPPORTED)

    assert _state(claim) == (Severity.CONFIRM, None)


# ------------------------------------------------------------------------------ gold


@pytest.fixture
def disputed(opened, reviewer_a, reviewer_b):
    """hm-1-a claim 1: A says supported with one sentence, B partial with two."""
    claim = claim_at("hm-1-a", 1)
    a = submit_sheet(reviewer_a, claim, SUPPORTED, evidence_ref(claim, 1, PART_TIME))
    b = submit_sheet(
        reviewer_b,
        claim,
        PARTIAL,
        evidence_ref(claim, 1, FULL_TIME),
        evidence_ref(claim, 1, PART_TIME),
        unsupported_assertions=("staff",),
        notes="Only employees.",
    )
    return claim, a, b


def test_take_a_copies_the_sheet_and_links_both(disputed, lead):
    claim, a, b = disputed

    gold = services.adjudication_save(
        claim=claim,
        lead=lead,
        version=0,
        take=a.pk,
        reason=Adjudication.Reason.REVIEWER_ERROR,
        note="B over-read the hedge",
    )

    gold.refresh_from_db()
    assert (gold.source, gold.judgment, gold.from_sheet, gold.lead, gold.version) == (
        "sheet",
        SUPPORTED,
        a,
        lead,
        1,
    )
    assert (gold.evidence, gold.reason, gold.note) == (
        a.evidence,
        "reviewer_error",
        "B over-read the hedge",
    )
    assert sorted(gold.sheets.values_list("pk", flat=True)) == [a.pk, b.pk]
    assert [(h.history_type, h.history_user) for h in gold.history.all()] == [("+", lead)]


def test_an_edited_version_is_checked_like_a_sheet(disputed, lead):
    claim, _a, _b = disputed
    merged = GoldData(
        judgment=PARTIAL,
        evidence=(evidence_ref(claim, 1, PART_TIME),),
        unsupported_assertions=("staff", "", "staff"),
        verification_worthy=False,
        wrong_citation_passage=2,  # left over: only a wrong citation keeps a passage
    )

    gold = services.adjudication_save(
        claim=claim, lead=lead, version=0, data=merged, reason="both_partly_right"
    )

    gold.refresh_from_db()
    assert (gold.source, gold.judgment, gold.from_sheet, gold.wrong_citation_passage) == (
        "edited",
        PARTIAL,
        None,
        None,
    )
    assert [e["text"] for e in gold.evidence] == [PART_TIME]
    assert (gold.unsupported_assertions, gold.verification_worthy) == (
        [{"text": "staff", "start": None, "end": None, "note": ""}],
        False,
    )

    with pytest.raises(SheetIncomplete) as error:
        services.adjudication_save(
            claim=claim, lead=lead, version=1, data=GoldData(judgment=SUPPORTED), reason="other"
        )
    assert error.value.problems == ["“Supported” needs at least one evidence sentence."]


def test_a_disagreement_needs_a_reason_code(disputed, lead):
    claim, a, _b = disputed

    with pytest.raises(ReviewError) as error:
        services.adjudication_save(claim=claim, lead=lead, version=0, take=a.pk)

    assert str(error.value) == "Choose a reason code: the reviewers disagreed."
    assert Adjudication.objects.count() == 0


def test_only_a_lead_adjudicates_and_only_finished_claims(opened, disputed, reviewer_a, lead):
    claim, a, _b = disputed
    with pytest.raises(PermissionDenied):
        services.adjudication_save(claim=claim, lead=reviewer_a, version=0, take=a.pk)

    half = claim_at("hm-1-a", 2)
    submit_sheet(reviewer_a, half, NOT_SUPPORTED)
    with pytest.raises(ReviewError) as error:
        services.adjudication_save(
            claim=half, lead=lead, version=0, data=GoldData(judgment=NOT_SUPPORTED)
        )
    assert str(error.value) == "Not every assigned sheet of this claim is submitted yet."


def test_a_sheet_of_another_claim_cannot_be_taken(disputed, opened, reviewer_a, lead):
    claim, _a, _b = disputed
    elsewhere = submit_sheet(reviewer_a, claim_at("hm-1-a", 2), NOT_SUPPORTED)

    with pytest.raises(ReviewError) as error:
        services.adjudication_save(
            claim=claim, lead=lead, version=0, take=elsewhere.pk, reason="other"
        )

    assert str(error.value) == "That sheet is not one of this claim’s submitted sheets."


def test_second_lead_saving_without_seeing_the_first_gold_is_refused(disputed, lead, other_lead):
    # Both leads opened the claim while it had no gold (version 0). The first insert wins;
    # the second hits the one-gold-per-claim constraint and is told so.
    claim, a, b = disputed
    services.adjudication_save(claim=claim, lead=lead, version=0, take=a.pk, reason="other")

    with pytest.raises(StaleAdjudication) as stale:
        services.adjudication_save(
            claim=claim, lead=other_lead, version=0, take=b.pk, reason="other"
        )

    assert str(stale.value) == (
        "Another lead saved this claim’s gold record while you were working on it (now "
        "version 1, by lead). Nothing from this page was saved: reload to see their version, "
        "then decide again."
    )
    gold = Adjudication.objects.get(claim=claim)
    assert (gold.from_sheet, gold.lead, gold.version, gold.history.count()) == (a, lead, 1, 1)


def test_an_edit_naming_an_old_version_is_refused(disputed, lead, other_lead):
    claim, a, b = disputed
    services.adjudication_save(claim=claim, lead=lead, version=0, take=a.pk, reason="other")
    services.adjudication_save(claim=claim, lead=other_lead, version=1, take=b.pk, reason="other")

    with pytest.raises(StaleAdjudication) as stale:
        services.adjudication_save(claim=claim, lead=lead, version=1, take=a.pk, reason="other")

    assert stale.value.current.version == 2
    gold = Adjudication.objects.get(claim=claim)
    assert (gold.from_sheet, gold.lead, gold.version) == (b, other_lead, 2)
    assert list(gold.history.order_by("history_id").values_list("version", "from_sheet")) == [
        (1, a.pk),
        (2, b.pk),
    ]


def test_flagging_raises_a_guideline_flag(disputed, lead):
    claim, a, _b = disputed

    services.adjudication_save(
        claim=claim,
        lead=lead,
        version=0,
        take=a.pk,
        reason="guideline_gap",
        flag_comment="  Is pro rata partial support?  ",
    )

    flag = GuidelineFlag.objects.get()
    assert (flag.claim, flag.raised_by, flag.comment, flag.audit_set_id) == (
        claim,
        lead,
        "Is pro rata partial support?",
        claim.answer.audit_set_id,
    )


@pytest.mark.django_db(transaction=True)
def test_two_leads_saving_at_the_same_moment_leave_one_gold(
    role_groups, disputed, lead, other_lead
):
    claim, a, b = disputed
    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def save(user, sheet: AuditSheet) -> None:
        try:
            start.wait()
            services.adjudication_save(
                claim=claim, lead=user, version=0, take=sheet.pk, reason="other"
            )
            outcomes[user.username] = "saved"
        except StaleAdjudication:
            outcomes[user.username] = "stale"
        finally:
            connection.close()

    threads = [
        threading.Thread(target=save, args=(lead, a)),
        threading.Thread(target=save, args=(other_lead, b)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    gold = Adjudication.objects.get(claim=claim)
    assert sorted(outcomes.values()) == ["saved", "stale"]
    assert outcomes[gold.lead.username] == "saved"
    assert gold.history.count() == 1


# ------------------------------------------------------------- wrong-citation evidence

FAQ = "Part-time staff: entitlement is calculated pro rata."


@pytest.fixture
def misattributed(opened, reviewer_a, reviewer_b):
    """hm-1-a claim 0 cites [1] only: A says supported by a sentence of [1]; B says wrong
    citation ([2] supports it) but left that sentence of [1] in the evidence."""
    claim = claim_at("hm-1-a", 0)
    a = submit_sheet(reviewer_a, claim, SUPPORTED, evidence_ref(claim, 1, FULL_TIME))
    b = submit_sheet(
        reviewer_b,
        claim,
        WRONG_CITATION,
        evidence_ref(claim, 1, FULL_TIME),
        evidence_ref(claim, 2, FAQ),
        wrong_citation_passage=2,
    )
    return claim, a, b


REFUSED_CITED = (
    "“Wrong citation” says the cited passages do not support the claim: untick "
    f"“{FULL_TIME}” in cited passage [1], or choose another judgment."
)


def test_a_wrong_citation_gold_with_evidence_in_a_cited_passage_is_refused(misattributed, lead):
    claim, _a, _b = misattributed
    merged = GoldData(
        judgment=WRONG_CITATION,
        evidence=(evidence_ref(claim, 1, FULL_TIME), evidence_ref(claim, 2, FAQ)),
        wrong_citation_passage=2,
    )

    with pytest.raises(SheetIncomplete) as error:
        services.adjudication_save(claim=claim, lead=lead, version=0, data=merged, reason="other")

    assert error.value.problems == [REFUSED_CITED]
    assert Adjudication.objects.filter(claim=claim).count() == 0


def test_taking_a_wrong_citation_sheet_with_cited_evidence_is_refused(misattributed, lead):
    claim, _a, b = misattributed

    with pytest.raises(SheetIncomplete) as error:
        services.adjudication_save(claim=claim, lead=lead, version=0, take=b.pk, reason="other")

    assert error.value.problems == [REFUSED_CITED]
    assert Adjudication.objects.filter(claim=claim).count() == 0


def test_a_wrong_citation_gold_keeps_evidence_in_the_right_passage(misattributed, lead):
    claim, _a, _b = misattributed
    merged = GoldData(
        judgment=WRONG_CITATION, evidence=(evidence_ref(claim, 2, FAQ),), wrong_citation_passage=2
    )

    gold = services.adjudication_save(
        claim=claim, lead=lead, version=0, data=merged, reason="other"
    )

    gold.refresh_from_db()
    assert [(e["passage"], e["text"]) for e in gold.evidence] == [(2, FAQ)]
    assert gold.wrong_citation_passage.position == 2


# ------------------------------------------------------------------ number override


def test_a_number_override_needs_a_reason_and_a_later_save_without_it_clears_it(disputed, lead):
    claim, a, _b = disputed

    with pytest.raises(ReviewError) as error:
        services.adjudication_save(
            claim=claim,
            lead=lead,
            version=0,
            take=a.pk,
            reason="other",
            numbers_overridden=True,
            numbers_override_reason="  ",
        )
    assert str(error.value) == "Say why the number check is overridden."
    assert Adjudication.objects.filter(claim=claim).count() == 0

    gold = services.adjudication_save(
        claim=claim,
        lead=lead,
        version=0,
        take=a.pk,
        reason="other",
        numbers_overridden=True,
        numbers_override_reason=" [1] says “four weeks”. ",
    )
    gold.refresh_from_db()
    assert (gold.numbers_overridden, gold.numbers_override_reason) == (
        True,
        "[1] says “four weeks”.",
    )

    gold = services.adjudication_save(
        claim=claim,
        lead=lead,
        version=1,
        take=a.pk,
        reason="other",
        numbers_override_reason="left over",
    )
    gold.refresh_from_db()
    assert (gold.numbers_overridden, gold.numbers_override_reason) == (False, "")
