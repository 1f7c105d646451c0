"""The pure measurement of suggestions against gold and of anchoring, on small hand-worked
cases."""

from __future__ import annotations

import math

import pytest

from audit import suggestion_metrics as sm
from audit.suggestions import Suggested, SuggestedSpan

SUPPORTED, NOT = "supported", "not_supported"


def ev(passage: int, start: int, end: int, score: float | None = None) -> SuggestedSpan:
    return SuggestedSpan(start, end, passage, score)


def contains(figure: sm.Figure) -> bool:
    return figure.low <= figure.value <= figure.high


def finite(figure: sm.Figure) -> bool:
    return all(v is None or math.isfinite(v) for v in (figure.value, figure.low, figure.high))


def test_any_at_3_needs_an_overlap_among_the_top_three():
    gold = sm.GoldClaim(1, SUPPORTED, evidence=((1, 100, 150),))
    fourth = Suggested(1, evidence=(ev(1, 0, 10), ev(1, 20, 30), ev(2, 100, 150), ev(1, 140, 160)))
    third = Suggested(1, evidence=(ev(1, 0, 10), ev(1, 20, 30), ev(1, 149, 160)))
    assert sm.evidence_hits(gold, fourth) == (False, True)
    assert sm.evidence_hits(gold, third) == (True, True)


def test_touching_spans_do_not_overlap():
    assert not sm.overlaps((1, 0, 10), (1, 10, 20))
    assert sm.overlaps((1, 0, 11), (1, 10, 20))
    assert not sm.overlaps((1, 0, 11), (2, 10, 20))


def test_whole_set_cuts_gold_into_its_sentences():
    # One stored span over two sentences: finding the first sentence alone is not the whole set.
    sentences = {1: [(0, 50), (51, 100), (101, 150)]}
    gold = sm.GoldClaim(1, SUPPORTED, evidence=((1, 0, 100),), sentences=sentences)
    assert sm.gold_units(gold) == ((1, 0, 50), (1, 51, 100))
    assert sm.evidence_hits(gold, Suggested(1, evidence=(ev(1, 0, 50),))) == (True, False)
    both = Suggested(1, evidence=(ev(1, 0, 50), ev(1, 101, 150), ev(1, 51, 100)))
    assert sm.evidence_hits(gold, both) == (True, True)


def test_evidence_figures_count_only_claims_both_have_evidence():
    gold = [
        sm.GoldClaim(1, SUPPORTED, evidence=((1, 0, 10),)),
        sm.GoldClaim(2, SUPPORTED, evidence=((1, 0, 10),)),
        sm.GoldClaim(3, NOT),  # no gold evidence
        sm.GoldClaim(4, SUPPORTED, evidence=((1, 0, 10),)),  # no suggestion at all
        sm.GoldClaim(5, SUPPORTED, evidence=((1, 0, 10),)),  # a suggestion without evidence
    ]
    suggested = {
        1: Suggested(1, evidence=(ev(1, 5, 8),)),
        2: Suggested(2, evidence=(ev(2, 5, 8),)),
        3: Suggested(3, evidence=(ev(1, 5, 8),)),
        5: Suggested(5, judgment=SUPPORTED),
    }
    figures = sm.source_figures(gold, suggested)
    assert (figures.gold_claims, figures.covered, figures.evidence_claims) == (5, 4, 4)
    assert (figures.any_at_3.hits, figures.any_at_3.n, figures.any_at_3.value) == (1, 2, 0.5)
    assert figures.whole_at_5.value == 0.5
    assert contains(figures.any_at_3)
    assert figures.any_at_3.small


def test_token_f1_is_micro_over_claims_with_words():
    text = "The drug cut deaths by 40 percent in 2019"
    # Gold: "40 percent" (words at 22 and 25); suggestion: "by 40" → tp 1, fp 1, fn 1.
    gold = [
        sm.GoldClaim(1, NOT, unsupported=((22, 32),), text=text),
        sm.GoldClaim(2, SUPPORTED, text=text),  # neither marks words: left out
        sm.GoldClaim(3, NOT, unsupported=((0, 8),), text=text),  # "The drug": fn 2
    ]
    suggested = {
        1: Suggested(1, unsupported=(SuggestedSpan(19, 24),)),
        2: Suggested(2),
        3: Suggested(3),
    }
    figure = sm.token_f1(gold, suggested)
    # tp 1, fp 1, fn 3 → 2 / (2 + 1 + 3)
    assert figure.value == pytest.approx(2 / 6)
    assert figure.n == 2
    assert contains(figure) and finite(figure)


def test_token_f1_is_none_for_a_source_without_words():
    gold = [sm.GoldClaim(1, NOT, unsupported=((0, 3),), text="abc def")]
    assert sm.token_f1(gold, {1: Suggested(1, judgment=NOT)}) == sm.NONE


def test_accuracy_and_kappa_of_a_right_and_a_constant_suggester():
    gold = [SUPPORTED] * 6 + [NOT] * 4
    accuracy, kappa = sm.judgment_figures(gold, gold)
    assert (accuracy.value, kappa.value) == (1.0, 1.0)
    assert accuracy.high == 1.0 and accuracy.low < 1.0
    assert contains(kappa) and contains(accuracy)
    accuracy, kappa = sm.judgment_figures(gold, [SUPPORTED] * 10)
    assert accuracy.value == pytest.approx(0.6)
    assert kappa.value == pytest.approx(0.0)
    assert contains(kappa) and finite(kappa)


def test_kappa_is_none_when_everyone_says_one_label():
    accuracy, kappa = sm.judgment_figures([SUPPORTED] * 5, [SUPPORTED] * 5)
    assert accuracy.value == 1.0
    assert kappa.value is None and kappa.low is None and kappa.n == 5


def test_kappa_hand_computed():
    # po = 0.75, pe = (3·2 + 1·2) / 16 = 0.5 → κ 0.5
    gold = [SUPPORTED, SUPPORTED, SUPPORTED, NOT]
    guess = [SUPPORTED, SUPPORTED, NOT, NOT]
    _, kappa = sm.judgment_figures(gold, guess)
    assert kappa.value == pytest.approx(0.5)


def test_empty_inputs_give_none():
    figures = sm.source_figures([], {})
    for figure in (
        figures.any_at_3,
        figures.whole_at_5,
        figures.token_f1,
        figures.accuracy,
        figures.kappa,
        figures.judgment_kept,
        figures.evidence_kept,
    ):
        assert figure == sm.NONE
    assert not figures.automation_bias
    result = sm.anchoring([])
    assert result.shown.agreement == sm.NONE
    assert result.agreement_difference == sm.NONE
    assert result.kappa_difference == sm.NONE
    assert result.accuracy_difference == sm.NONE


def test_acceptance_counts_kept_judgments_and_marked_evidence():
    marked = frozenset({(1, 0, 10), (1, 10, 20)})
    sheets = [
        # Touching marked sentences, stored as one span: kept as is.
        sm.ShownSheet(1, SUPPORTED, frozenset({(1, 0, 20)}), SUPPORTED, marked),
        sm.ShownSheet(2, NOT, frozenset({(1, 0, 10)}), SUPPORTED, marked),
        sm.ShownSheet(3, SUPPORTED, frozenset(), "", frozenset()),  # shown nothing
    ]
    judgment, evidence = sm.acceptance(sheets, judgment_shown=True)
    assert (judgment.hits, judgment.n) == (1, 2)
    assert (evidence.hits, evidence.n) == (1, 2)
    hidden, _ = sm.acceptance(sheets, judgment_shown=False)
    assert hidden == sm.NONE


def test_near_total_acceptance_is_flagged():
    marked = frozenset({(1, 0, 10)})
    sheets = [sm.ShownSheet(i, SUPPORTED, marked, "", marked) for i in range(20)]
    _, evidence = sm.acceptance(sheets, judgment_shown=False)
    assert evidence.value == 1.0 and sm.biased(evidence)
    assert not sm.biased(sm.proportion(19, 19))


def test_marked_takes_the_top_three_near_the_best_score():
    spans = [ev(1, 0, 5, 1.0), ev(1, 6, 9, 0.8), ev(1, 10, 12, 0.5), ev(1, 13, 15, 0.99)]
    assert sm.marked(spans) == frozenset({(1, 0, 5), (1, 6, 9)})
    unscored = [ev(1, 0, 5), ev(1, 6, 9), ev(1, 10, 12), ev(1, 13, 15)]
    assert sm.marked(unscored) == frozenset({(1, 0, 5), (1, 6, 9), (1, 10, 12)})


def test_newcombe_hand_checked():
    # 1.0 of 40 against 0.5 of 40
    difference = sm.newcombe(sm.proportion(40, 40), sm.proportion(20, 40))
    assert difference.value == pytest.approx(0.5)
    assert 0.3 < difference.low < 0.5 < difference.high < 0.7


def test_anchoring_separates_shown_from_withheld():
    claims = [
        sm.AnchorClaim(i, False, (SUPPORTED, SUPPORTED) if i % 2 else (NOT, NOT), SUPPORTED)
        for i in range(30)
    ] + [
        sm.AnchorClaim(100 + i, True, (SUPPORTED, NOT) if i % 2 else (NOT, NOT), SUPPORTED)
        for i in range(30)
    ]
    result = sm.anchoring(claims)
    assert (result.shown.claims, result.withheld.claims) == (30, 30)
    assert result.shown.agreement.value == 1.0
    assert result.withheld.agreement.value == 0.5
    assert result.agreement_difference.value == pytest.approx(0.5)
    assert result.agreement_difference.low > 0
    assert result.shown.kappa.value == 1.0
    assert result.kappa_difference.low > 0
    # Accuracy: shown 30 of 60 sheets, withheld 15 of 60.
    assert result.shown.accuracy.value == 0.5
    assert result.withheld.accuracy.value == 0.25
    assert result.accuracy_difference.value == pytest.approx(0.25)
    for figure in (
        result.shown.agreement,
        result.shown.accuracy,
        result.withheld.kappa,
        result.agreement_difference,
        result.kappa_difference,
        result.accuracy_difference,
    ):
        assert contains(figure) and finite(figure)


def test_anchoring_with_one_group_only_has_no_difference():
    claims = [sm.AnchorClaim(i, False, (SUPPORTED, SUPPORTED), SUPPORTED) for i in range(5)]
    result = sm.anchoring(claims)
    assert result.withheld.agreement == sm.NONE
    assert result.agreement_difference == sm.NONE
    # Everyone says one label: κ is undefined, never NaN.
    assert result.shown.kappa.value is None
