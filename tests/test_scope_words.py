"""Scope drift: a claim whose words are mostly in its source but whose subject, quantifier,
modal, negation or unit differs is never labelled a match, and the differing words are
named side by side."""

import pytest

from audit import matching
from audit.scope_words import Difference, scope_differences

# The user guide's own example: a real citation pinned to a claim it does not support.
GUIDE_CLAIM = "Customers can return hardware within 30 days [1]."
GUIDE_SOURCE = "Consumers may return hardware within 30 days. Shipping is free."


@pytest.mark.parametrize(
    ("claim", "source", "expected"),
    [
        (
            "Customers can return hardware.",
            "Consumers can return hardware.",
            [Difference("word", "customers", "consumers")],
        ),
        (
            "All customers can return hardware.",
            "Some customers can return hardware.",
            [Difference("quantifier", "all", "some")],
        ),
        (
            "Customers can return hardware.",
            "Only business customers can return hardware.",
            [Difference("quantifier", "", "only")],
        ),
        (
            "Customers can return hardware.",
            "Customers may return hardware.",
            [Difference("modal", "can", "may")],
        ),
        (
            "Customers must register the device.",
            "Customers should register the device.",
            [Difference("modal", "must", "should")],
        ),
        (
            "Customers can return hardware.",
            "Customers cannot return hardware.",
            [Difference("negation", "", "not")],
        ),
        (
            "Customers can return hardware.",
            "Customers can\u2019t return hardware.",
            [Difference("negation", "", "not")],
        ),
        (
            "The drug is not approved for children.",
            "The drug is approved for children.",
            [Difference("negation", "not", "")],
        ),
        (
            "Customers can return hardware within 30 days.",
            "Customers can return hardware within 30 months.",
            [Difference("unit", "30 days", "30 months")],
        ),
    ],
)
def test_each_kind_of_scope_drift_is_named_side_by_side(claim, source, expected):
    assert list(scope_differences(claim, source)) == expected


def test_the_guides_example_differs_in_its_subject_and_its_modal():
    assert matching.claim_differences(GUIDE_CLAIM, [GUIDE_SOURCE]) == (
        Difference("modal", "can", "may"),
        Difference("word", "customers", "consumers"),
    )


def test_the_same_statement_in_other_words_order_and_inflection_differs_in_nothing():
    assert (
        scope_differences(
            "The trial enrolled 1,204 patients.",
            "In total 1,204 patients were enrolled in the trial.",
        )
        == ()
    )
    assert scope_differences("Returns are free.", "Returns are free.") == ()
    assert scope_differences("Returns are free.", "   ") == ()


def test_a_neighbour_may_hold_a_claim_word_but_not_narrow_the_claim():
    # Support counts a sentence with its neighbour: a word found there is found.
    assert (
        scope_differences(
            "Acme customers return hardware.", "They return hardware.", "Acme customers"
        )
        == ()
    )
    # A quantifier only a neighbour states is about that neighbour, not this sentence.
    assert (
        scope_differences(
            "Customers return hardware.", "Customers return hardware.", "Some stores close."
        )
        == ()
    )


def test_scope_drift_keeps_a_close_match_from_the_top_label():
    drifted = matching.check_claim(GUIDE_CLAIM, [GUIDE_SOURCE], [])
    assert drifted.best_score >= matching.VERIFIED_MIN_SCORE
    assert drifted.label == "likely"

    same = matching.check_claim(
        GUIDE_CLAIM, ["Customers can return hardware within 30 days. Shipping is free."], []
    )
    assert same.label == "verified"


@pytest.mark.parametrize(
    "source",
    [
        "Customers may return hardware within 30 days.",
        "Customers cannot return hardware within 30 days.",
        "Some customers can return hardware within 30 days.",
        "Customers can return hardware within 30 weeks.",
    ],
)
def test_no_drifted_source_is_labelled_a_match(source):
    checks = matching.check_claim(GUIDE_CLAIM, [source], [])
    assert checks.label != "verified"


def test_a_claim_found_word_for_word_in_a_later_tied_sentence_is_still_a_match():
    # Two sentences hold every word; the first differs in its modal, the second does not.
    source = (
        "Customers may return hardware within 30 days. "
        "Customers can return hardware within 30 days."
    )
    assert matching.check_claim(GUIDE_CLAIM, [source], []).label == "verified"
    assert matching.claim_differences(GUIDE_CLAIM, [source]) == ()
