import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.sentences import sentence_spans


def _sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


def test_full_stops_question_and_exclamation_marks_end_sentences():
    assert _sentences("One is here. Two? Three! Four.") == [
        "One is here.",
        "Two?",
        "Three!",
        "Four.",
    ]


def test_a_newline_ends_a_sentence_without_a_full_stop():
    text = "Key findings\n- Revenue rose to 45.2 million\n- Headcount grew"

    assert _sentences(text) == [
        "Key findings",
        "- Revenue rose to 45.2 million",
        "- Headcount grew",
    ]


def test_abbreviations_and_initials_do_not_end_sentences():
    text = "Dr. Smith moved to the U.S. Army base, e.g. in 2010. J. K. Rowling wrote it. Next."

    assert _sentences(text) == [
        "Dr. Smith moved to the U.S. Army base, e.g. in 2010.",
        "J. K. Rowling wrote it.",
        "Next.",
    ]


def test_decimals_and_thousands_do_not_end_sentences():
    assert _sentences("It rose 3.5 percent to 1,204.5 units. Then it fell.") == [
        "It rose 3.5 percent to 1,204.5 units.",
        "Then it fell.",
    ]


def test_a_lower_case_continuation_is_not_a_new_sentence():
    assert _sentences("Prices rose approx. three times. Done.") == [
        "Prices rose approx. three times.",
        "Done.",
    ]


def test_number_abbreviation_only_before_a_digit():
    assert _sentences("It ranked No. 1 overall. The answer is no. Then we left.") == [
        "It ranked No. 1 overall.",
        "The answer is no.",
        "Then we left.",
    ]


def test_closing_quotes_and_footnote_markers_stay_with_their_sentence():
    assert _sentences('He said "it works." Then it broke.[12] After that, nothing.') == [
        'He said "it works."',
        "Then it broke.[12]",
        "After that, nothing.",
    ]


def test_enumeration_markers_stay_with_their_item():
    assert _sentences("1. Public ownership is weak.\n2. Prices rise.") == [
        "1. Public ownership is weak.",
        "2. Prices rise.",
    ]


def test_spans_exclude_surrounding_whitespace():
    text = "  \u00a0First one.   Second one.\n\n  "

    assert sentence_spans(text) == [(3, 13), (16, 27)]


def test_a_very_long_run_without_punctuation_is_cut_at_spaces():
    text = " ".join(["word"] * 1000)

    spans = sentence_spans(text)

    assert len(spans) > 1
    assert all(end - start <= 1500 for start, end in spans)
    assert " ".join(text[s:e] for s, e in spans) == text


def test_empty_and_blank_texts_have_no_sentences():
    assert sentence_spans("") == []
    assert sentence_spans(" \n\t ") == []


@given(st.text(alphabet=st.sampled_from("ab .!?\n\"')[]1U.S\u00a0\u2019"), max_size=200))
def test_spans_are_ordered_disjoint_stripped_and_non_empty(text):
    spans = sentence_spans(text)

    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        assert not text[start].isspace()
        assert not text[end - 1].isspace()
        previous_end = end


@given(st.text(max_size=300))
def test_splitting_never_raises_and_covers_all_non_space_text(text):
    spans = sentence_spans(text)

    covered = "".join(text[s:e] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())


@pytest.mark.parametrize(
    "quoted",
    [
        '"Revenue rose." [1]',
        '"Revenue rose."[1]',
        "\u201cRevenue rose.\u201d [1]",
        "\u2018Revenue rose.\u2019 [1]",
        '"Revenue rose?" [1]',
        "\u201cRevenue rose!\u201d [1]",
        '"Revenue rose. [1]"',
        "\u201cRevenue rose.[1]\u201d",
        "(revenue rose.) [1]",
    ],
)
def test_a_footnote_marker_by_a_closing_quote_stays_with_its_sentence(quoted):
    assert _sentences(f"The filing says {quoted} Headcount grew [2].") == [
        f"The filing says {quoted}",
        "Headcount grew [2].",
    ]


def test_a_footnote_marker_before_lower_case_does_not_end_a_sentence():
    assert _sentences("It rose by 5. [1] and then fell. Done.") == [
        "It rose by 5. [1] and then fell.",
        "Done.",
    ]
