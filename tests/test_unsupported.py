import subprocess
import sys
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from audit import unsupported
from audit.bm25 import STOP_WORDS, TERM
from audit.matching import prepare_passage
from audit.unsupported import Span, unsupported_spans
from tests.conftest import is_word_char

REFUND = "Consumers can return hardware within 30 days; business customers within 14 days."


def _texts(claim: str, spans: list[Span]) -> list[str]:
    return [claim[s.start : s.end] for s in spans]


# ---------------------------------------------------------------------------- examples


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # The passage gives 30 days to consumers; "customers" occurs only in the other clause.
        ("Customers can return hardware within 30 days.", ["Customers"]),
        ("Customers can return hardware within 60 days.", ["60 days"]),
        ("Consumers can return software within 30 days.", ["software"]),
        ("Consumers can return hardware within 30 days.", []),
        ("consumers can return HARDWARE within 30 days", []),
    ],
)
def test_refund_policy_claims(claim, expected):
    assert _texts(claim, unsupported_spans(claim, [REFUND])) == expected


def test_a_stated_figure_is_not_suggested_on_its_own():
    # Figures are often wrong in the training claims, so the model leans towards them; a
    # suggestion must still hold a term that the evidence lacks.
    claim = "Consumers can return hardware within 30 days."
    source = "Hardware: consumers may return it, unused, within 30 days of delivery."

    assert unsupported_spans(claim, [source]) == []


def test_an_unsupported_date_is_marked_with_its_preposition():
    claim = "Raza made his debut for Pakistan against Zimbabwe on 24 October 1996."
    source = "Hasan Raza made his Test debut for Pakistan against Zimbabwe aged 14."

    assert _texts(claim, unsupported_spans(claim, [source])) == ["on 24 October 1996"]


def test_figures_are_compared_character_for_character_like_the_number_check():
    source = "The plant hired 1,200 workers."

    assert unsupported_spans("The plant hired 1,200 workers.", [source]) == []
    claim = "The plant hired 1200 workers."
    # People mark the phrase a wrong figure belongs to, and the model learnt that.
    assert _texts(claim, unsupported_spans(claim, [source])) == ["1200 workers"]


def test_inflected_forms_are_the_same_word():
    source = "The committee approved the budgets in March."

    assert unsupported_spans("The committee approves the budget in March.", [source]) == []


def test_a_number_suffix_stays_with_its_number_and_the_date_its_preposition():
    claim = "It opened on the 24th of May."

    assert _texts(claim, unsupported_spans(claim, ["It opened in June."])) == ["on the 24th"]


def test_no_evidence_marks_everything_from_the_first_to_the_last_content_word():
    claim = "The company was founded in 1999 by two engineers."

    assert _texts(claim, unsupported_spans(claim, [])) == [
        "company was founded in 1999 by two engineers"
    ]
    assert unsupported_spans(claim, ["", "  \n "]) == unsupported_spans(claim, [])


def test_a_claim_of_stop_words_only_has_no_span():
    assert unsupported_spans("It is what it is.", []) == []


def test_prepared_passages_give_the_same_spans():
    claim = "Customers can return hardware within 60 days."

    assert unsupported_spans(claim, [prepare_passage(REFUND)]) == unsupported_spans(claim, [REFUND])


def test_offsets_point_into_the_claim_as_written_after_folding_changes_lengths():
    # casefold turns "ß" into "ss": offsets must still be the claim's.
    claim = "Die Straße wurde 1999 in Köln gebaut."

    spans = unsupported_spans(claim, ["Die Straße wurde in Köln gebaut."])

    assert _texts(claim, spans) == ["1999"]


def test_span_is_a_frozen_value():
    span = Span(1, 4)

    with pytest.raises(FrozenInstanceError):
        span.start = 2  # type: ignore[misc]
    assert span == Span(1, 4)
    assert sorted([Span(5, 6), Span(1, 2)]) == [Span(1, 2), Span(5, 6)]


def test_the_model_has_one_weight_per_feature():
    assert len(unsupported._WEIGHTS) == len(unsupported.FEATURES)


def test_a_phrase_is_the_run_of_tokens_between_punctuation():
    read = unsupported._read_claim("Born in 1950, in Leeds (UK) - a city")
    # Content terms: born | 1950 | leeds | uk | city; the stop words share their phrase.
    missing = [term in {"1950", "leed", "uk"} for term in read.terms]

    share, whole = unsupported._phrase_missing(read, missing)

    words = [read.folded[s:e] for s, e in zip(read.starts, read.ends, strict=True)]
    assert words == ["born", "in", "1950", "in", "leeds", "uk", "a", "city"]
    assert share == [0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert whole == [False, False, False, True, True, True, False, False]


@given(st.lists(st.sampled_from(["cats", "the", "1950", ",", ";", "(", "dogs", "-"]), max_size=20))
def test_phrase_shares_are_shares_and_whole_means_every_term_missing(words):
    read = unsupported._read_claim(" ".join(words))
    missing = [bool(term) and term.startswith("c") for term in read.terms]

    share, whole = unsupported._phrase_missing(read, missing)

    assert len(share) == len(whole) == len(read.terms)
    for i in range(len(read.terms)):
        assert 0.0 <= share[i] <= 1.0
        assert whole[i] == (share[i] == 1.0)
        if read.terms[i] and missing[i] is False:
            assert not whole[i]


@pytest.mark.parametrize("first", ["audit.unsupported", "audit.matching"])
def test_either_module_can_be_imported_first(first):
    # unsupported depends on matching, never the other way round.
    code = (
        f"import {first}; from audit.unsupported import Span, unsupported_spans; "
        "import audit.matching as m; assert not hasattr(m, 'unsupported_spans'); "
        "print(unsupported_spans('Cats sleep.', ['Dogs sleep.']))"
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert result.stdout.strip() == repr(unsupported_spans("Cats sleep.", ["Dogs sleep."]))


# ---------------------------------------------------------------------------- properties

_CHARS = st.sampled_from(
    list("abcdefghij ABC 0123456789 .,;:!?-'\"()[]<>&/=\n\t")
    + list("\u00a0\u2009\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00e9\u00df\u0130\ufb01")
)
_WORDS = ["return", "hardware", "within", "days", "the", "of", "30", "14", "Customers", "not"]
_CLAIM = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=10).map(" ".join)
# Markup, entities, bidi and zero-width characters, combining marks, NUL: what imported
# answers and scraped pages carry.
_HOSTILE = st.one_of(
    st.text(max_size=120),
    st.lists(
        st.sampled_from(
            [
                "<script>alert(1)</script>",
                "<b>",
                "&amp;",
                "&#x27;",
                "\u202e",
                "\u200b",
                "\u0301",
                "\x00",
                "e\u0301",
                "\U0001f600",
                "ﬁnance",
                "İstanbul",
                "30",
                "days",
                " ",
                "\n",
                "[1]",
            ]
        ),
        max_size=25,
    ).map("".join),
)


def _assert_well_formed(claim: str, spans: list[Span]) -> None:
    previous_end = -1
    for span in spans:
        assert 0 <= span.start < span.end <= len(claim)
        assert span.start > previous_end  # sorted, non-overlapping, not touching
        previous_end = span.end
        # Never inside a word.
        assert span.start == 0 or not (
            is_word_char(claim[span.start - 1]) and is_word_char(claim[span.start])
        )
        assert span.end == len(claim) or not (
            is_word_char(claim[span.end - 1]) and is_word_char(claim[span.end])
        )
        assert any(is_word_char(c) for c in claim[span.start : span.end])


@settings(max_examples=200)
@given(
    st.one_of(_CLAIM, st.text(alphabet=_CHARS, max_size=100)),
    st.lists(st.one_of(_CLAIM, st.text(alphabet=_CHARS, max_size=200)), max_size=3),
)
def test_spans_are_sorted_non_overlapping_and_whole_words(claim, evidence):
    _assert_well_formed(claim, unsupported_spans(claim, evidence))


@settings(max_examples=200)
@given(_HOSTILE, st.lists(_HOSTILE, max_size=3))
def test_hostile_text_gives_well_formed_spans(claim, evidence):
    _assert_well_formed(claim, unsupported_spans(claim, evidence))


@settings(max_examples=200)
@given(st.one_of(_CLAIM, st.text(alphabet=_CHARS, max_size=100)))
def test_without_evidence_every_content_word_is_unsupported(claim):
    spans = unsupported_spans(claim, [])
    folded = claim.casefold()
    assume(len(folded) == len(claim))  # offsets of the check below are the claim's

    for m in TERM.finditer(folded):
        if m.group() not in STOP_WORDS:
            assert any(s.start <= m.start() and m.end() <= s.end for s in spans)


@settings(max_examples=200)
@given(
    st.one_of(_CLAIM, st.text(alphabet=_CHARS, max_size=100)),
    st.text(alphabet=_CHARS, max_size=80),
    st.text(alphabet=_CHARS, max_size=80),
)
def test_a_claim_quoted_in_the_evidence_has_no_span(claim, before, after):
    assert unsupported_spans(claim, [f"{before} {claim} {after}"]) == []


@settings(max_examples=100)
@given(_CLAIM, st.lists(_CLAIM, max_size=3))
def test_spans_are_deterministic(claim, evidence):
    assert unsupported_spans(claim, evidence) == unsupported_spans(claim, list(evidence))
