"""Judgments below the sentence: evidence spans merged per passage, unsupported assertions as
spans of the claim (checked, trimmed, merged, with notes), old plain strings still read, and
what makes two sheets' assertions the same."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit import agreement, judgments
from audit.judgments import (
    Assertion,
    EvidenceRef,
    JudgmentError,
    assertion_keys,
    assertion_tokens,
    checked_assertions,
    checked_evidence,
    evidence_tokens,
    merged_assertions,
    stored_assertions,
)

CLAIM = "Refunds are available within 30 days for business tickets."


def _span(text: str, words: str, note: str = "") -> Assertion:
    start = text.index(words)
    return Assertion(text=words, start=start, end=start + len(words), note=note)


# ----------------------------------------------------------------------------- evidence


def test_evidence_spans_of_one_passage_that_overlap_or_touch_become_one():
    passages = {1: "Alpha beta gamma. Delta epsilon.", 2: "Zeta eta."}
    refs = [
        EvidenceRef(1, 6, 10),  # beta
        EvidenceRef(1, 8, 16),  # ta gamm, overlaps
        EvidenceRef(1, 16, 17),  # ".", touches
        EvidenceRef(1, 18, 23),  # Delta: a gap of one space, stays apart
        EvidenceRef(2, 0, 4),
    ]

    assert checked_evidence(refs, passages) == [
        {"passage": 1, "start": 6, "end": 17, "text": "beta gamma."},
        {"passage": 1, "start": 18, "end": 23, "text": "Delta"},
        {"passage": 2, "start": 0, "end": 4, "text": "Zeta"},
    ]


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20)), max_size=30))
def test_merged_evidence_never_overlaps_and_covers_exactly_what_was_chosen(pairs):
    text = "The quick brown fox jumps over the lazy dog, twice a day."
    refs = [EvidenceRef(1, s, min(s + n, len(text))) for s, n in pairs if s < len(text)]

    stored = checked_evidence(refs, {1: text})

    covered = {i for r in refs for i in range(r.start, r.end)}
    assert {i for e in stored for i in range(e["start"], e["end"])} == covered
    assert all(e["text"] == text[e["start"] : e["end"]] for e in stored)
    assert all(a["end"] < b["start"] for a, b in zip(stored, stored[1:], strict=False))


# --------------------------------------------------------------------- unsupported spans


def test_assertion_spans_are_cut_from_the_claim_sorted_and_kept_with_their_notes():
    items = [
        _span(CLAIM, "for business tickets", "source says economy only"),
        _span(CLAIM, "30 days", "source says 14 days"),
        "  the whole thing  ",
        "",
    ]

    assert checked_assertions(items, CLAIM) == [
        {"text": "30 days", "start": 29, "end": 36, "note": "source says 14 days"},
        {
            "text": "for business tickets",
            "start": 37,
            "end": 57,
            "note": "source says economy only",
        },
        {"text": "the whole thing", "start": None, "end": None, "note": ""},
    ]


def test_a_span_taken_with_spaces_around_it_is_trimmed_to_its_words():
    start = CLAIM.index(" 30 days ")

    stored = checked_assertions([Assertion(start=start, end=start + 9)], CLAIM)

    assert stored == [{"text": "30 days", "start": 29, "end": 36, "note": ""}]


def test_overlapping_assertion_spans_merge_and_keep_both_notes():
    a = _span(CLAIM, "within 30", "no window stated")
    b = _span(CLAIM, "30 days", "source says 14 days")

    assert checked_assertions([a, b], CLAIM) == [
        {
            "text": "within 30 days",
            "start": 22,
            "end": 36,
            "note": "no window stated; source says 14 days",
        }
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (Assertion(start=5, end=5), "Unsupported-assertion offsets 5–5 are outside the claim."),
        (Assertion(start=-1, end=3), "Unsupported-assertion offsets -1–3 are outside the claim."),
        (
            Assertion(start=0, end=len(CLAIM) + 1),
            f"Unsupported-assertion offsets 0–{len(CLAIM) + 1} are outside the claim.",
        ),
        (
            Assertion(start=3, end=None),
            "Unsupported-assertion offsets 3–None are outside the claim.",
        ),
        (
            Assertion(text="Refunds", start=1, end=8),
            "Unsupported-assertion text does not match the claim.",
        ),
        (
            Assertion(text="x", note="n" * 2001),
            "A note on an unsupported assertion holds at most 2000 characters.",
        ),
    ],
)
def test_an_assertion_that_does_not_fit_the_claim_is_refused(item, message):
    with pytest.raises(JudgmentError) as failure:
        checked_assertions([item], CLAIM)
    assert str(failure.value) == message


def test_more_than_fifty_assertions_are_refused():
    with pytest.raises(JudgmentError):
        checked_assertions([f"claim part {i}" for i in range(51)], CLAIM)


@given(
    st.text(min_size=1, max_size=60),
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 30), st.text(max_size=5)), max_size=10),
)
def test_stored_spans_always_slice_back_to_their_text_and_never_overlap(claim, picks):
    items = [
        Assertion(start=s, end=min(s + n, len(claim)), note=note)
        for s, n, note in picks
        if s < len(claim)
    ]

    stored = checked_assertions(items, claim)

    spans = [a for a in stored if a["start"] is not None]
    assert all(claim[a["start"] : a["end"]] == a["text"] for a in spans)
    assert all(a["text"] == a["text"].strip() and a["text"] for a in spans)
    assert all(a["end"] < b["start"] for a, b in zip(spans, spans[1:], strict=False))
    # Storing what was stored changes nothing.
    assert checked_assertions(judgments.assertion_refs(stored), claim) == stored


def test_old_plain_strings_read_as_free_text_items():
    assert stored_assertions(["per year", {"text": "x", "start": 0, "end": 1, "note": "n"}]) == [
        {"text": "per year", "start": None, "end": None, "note": ""},
        {"text": "x", "start": 0, "end": 1, "note": "n"},
    ]
    assert judgments.assertion_refs(["per year"]) == (Assertion(text="per year"),)


def test_same_assertions_means_same_spans_and_free_text_ignoring_case_and_notes():
    a = [
        {"text": "30 days", "start": 32, "end": 39, "note": "says 14"},
        {"text": "Per  Year", "start": None, "end": None, "note": ""},
    ]
    b = [
        {"text": "30 days", "start": 32, "end": 39, "note": "another note"},
        {"text": " per year ", "start": None, "end": None, "note": ""},
    ]
    c = [{"text": "30 days", "start": 33, "end": 39, "note": "says 14"}]

    assert assertion_keys(a) == assertion_keys(b)
    assert assertion_keys(a) != assertion_keys(c)


def test_unanimous_assertions_keep_every_reviewers_note():
    a = [{"text": "30 days", "start": 32, "end": 39, "note": "says 14"}]
    b = [{"text": "30 days", "start": 32, "end": 39, "note": "business only"}]

    assert merged_assertions([a, b]) == [
        {"text": "30 days", "start": 32, "end": 39, "note": "says 14; business only"}
    ]


# ---------------------------------------------------------------------- disagreement kinds


def test_sheets_that_differ_only_in_unsupported_spans_are_not_unanimous():
    a = assertion_keys([{"text": "30 days", "start": 32, "end": 39, "note": ""}])
    b = assertion_keys([])

    found = agreement.disagreement(
        "partially_supported", "partially_supported", a_assertions=a, b_assertions=b
    )

    assert found.severity == agreement.Severity.ASSERTIONS
    assert agreement.is_unanimous("supported", "supported", a_assertions=a, b_assertions=b) is False
    assert agreement.is_unanimous("supported", "supported", a_assertions=a, b_assertions=a) is True


def test_a_judgment_difference_outranks_an_unsupported_span_difference():
    found = agreement.disagreement(
        "supported", "not_supported", a_assertions=frozenset({1}), b_assertions=frozenset()
    )

    assert found.severity == agreement.Severity.JUDGMENT


# ------------------------------------------------------------------------------ token F1


def test_evidence_token_f1_credits_the_words_two_spans_share():
    passage = "Refunds for business tickets within 14 days."
    whole = [{"passage": 1, "start": 0, "end": len(passage), "text": passage}]
    trimmed = [{"passage": 1, "start": 36, "end": 43, "text": "14 days"}]

    a, b = evidence_tokens(whole), evidence_tokens(trimmed)

    assert len(a) == 7 and len(b) == 2
    assert agreement.token_f1(a, b) == pytest.approx(2 * 2 / 9)
    assert (
        agreement.evidence_jaccard(judgments.stored_spans(whole), judgments.stored_spans(trimmed))
        == 0
    )


def test_unsupported_token_f1_is_one_when_neither_marks_anything():
    assert agreement.token_f1(assertion_tokens([]), assertion_tokens([])) == 1.0
    assert agreement.token_f1(assertion_tokens(["per year"]), assertion_tokens([])) == 0.0
    assert agreement.token_f1(assertion_tokens(["Per Year"]), assertion_tokens(["per year"])) == 1.0


@given(
    st.frozensets(st.integers(0, 30), max_size=15),
    st.frozensets(st.integers(0, 30), max_size=15),
)
def test_token_f1_is_symmetric_bounded_and_one_only_for_equal_sets(a, b):
    f1 = agreement.token_f1(a, b)

    assert f1 == agreement.token_f1(b, a)
    assert 0.0 <= f1 <= 1.0
    assert (f1 == 1.0) == (a == b)


@given(st.lists(st.frozensets(st.integers(0, 9), max_size=5), min_size=2, max_size=4))
def test_a_claims_token_f1_is_the_mean_over_its_pairs(sets):
    sheets = [
        agreement.CountedSheet(
            order=i, rater=i, judgment="supported", evidence=frozenset(), evidence_tokens=s
        )
        for i, s in enumerate(sets)
    ]

    facts = agreement.claim_facts(sheets)

    assert facts.evidence_f1 == pytest.approx(
        sum(p.evidence_f1 for p in facts.pairs) / len(facts.pairs)
    )
    assert facts.unsupported_f1 == 1.0
