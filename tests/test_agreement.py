from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.agreement import (
    BINARY_NOT,
    ConfusionMatrix,
    Disagreement,
    LabelScore,
    MatcherAcceptance,
    PairKappa,
    Rating,
    Severity,
    alpha_counts,
    cohen_kappa_pairs,
    collapse_binary,
    confusion,
    confusion_counts,
    count_ratings,
    disagreement,
    evidence_jaccard,
    is_unanimous,
    krippendorff_alpha,
    matcher_acceptance,
    matcher_acceptance_sums,
    mean_evidence_jaccard,
    percent_agreement,
    rater_vs_gold,
    rater_vs_gold_counts,
    sheet_confusion,
    sheet_matcher_counts,
    summarize,
    summarize_counts,
    unit_profile,
)
from audit.judgments import (
    CONTRADICTED,
    INACCESSIBLE,
    JUDGMENT_CODES,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    UNCLEAR,
    WRONG_CITATION,
)

YES, NO = SUPPORTED, NOT_SUPPORTED


def _two_by_two(both_yes: int, a_yes_b_no: int, a_no_b_yes: int, both_no: int) -> list[Rating]:
    """Ratings by raters A and B reproducing a published 2×2 agreement table."""
    cells = (
        [(YES, YES)] * both_yes
        + [(YES, NO)] * a_yes_b_no
        + [(NO, YES)] * a_no_b_yes
        + [(NO, NO)] * both_no
    )
    ratings = []
    for item, (a, b) in enumerate(cells):
        ratings += [Rating(item, "A", a), Rating(item, "B", b)]
    return ratings


def _matrix(rows: Sequence[Sequence[object]]) -> list[Rating]:
    """Ratings from a raters × units reliability matrix as printed in a paper (None = missing)."""
    return [
        Rating(unit, f"coder{r}", str(value))
        for r, row in enumerate(rows)
        for unit, value in enumerate(row)
        if value is not None
    ]


# --- Cohen's κ against Wikipedia "Cohen's kappa", section "Examples" ------------------------


def test_kappa_matches_wikipedia_simple_example() -> None:
    # 50 grant proposals, two readers: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
    # p_o = 0.7, p_e = 0.5, published κ = 0.4.
    [pair] = cohen_kappa_pairs(_two_by_two(20, 5, 10, 15))

    assert pair.n_items == 50
    assert pair.percent == pytest.approx(0.7, abs=1e-12)
    assert pair.kappa == pytest.approx(0.4, abs=1e-12)


@pytest.mark.parametrize(
    ("cells", "published", "exact"),
    [
        # "Same percentages but different numbers": both tables agree on 60 of 100 items,
        # p_e = 0.54 and 0.46, published κ = 0.1304 and 0.2593 (exactly 3/23 and 7/27).
        ((45, 15, 25, 15), 0.1304, 3 / 23),
        ((25, 35, 5, 35), 0.2593, 7 / 27),
    ],
)
def test_kappa_matches_wikipedia_same_percentage_examples(
    cells: tuple[int, int, int, int], published: float, exact: float
) -> None:
    [pair] = cohen_kappa_pairs(_two_by_two(*cells))

    assert pair.percent == pytest.approx(0.6, abs=1e-12)
    assert round(pair.kappa, 4) == published
    assert pair.kappa == pytest.approx(exact, abs=1e-12)


# --- Krippendorff's α against Krippendorff, "Computing Krippendorff's Alpha-Reliability" --
# (2011, https://repository.upenn.edu/asc_papers/43), and Wikipedia "Krippendorff's alpha".
# Each published figure is pinned to its printed rounding and to the exact fraction the
# paper's formula gives for the same data.


def test_alpha_matches_krippendorff_2011_binary_two_observers() -> None:
    # Section A: 10 units, two observers, 0/1. o_01 = 4, n_0 = 14, n_1 = 6, n = 20:
    # α = 1 − 19·4 / (14·6) = 2/21, printed as 0.095.
    ratings = _matrix([[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]])

    alpha = krippendorff_alpha(ratings)

    assert round(alpha, 3) == 0.095
    assert alpha == pytest.approx(2 / 21, abs=1e-12)


def test_alpha_matches_krippendorff_2011_nominal_two_observers() -> None:
    # Section B: Ben and Gerry code 12 units a–e; printed α = 0.692 (exactly 155/224).
    ben = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
    gerry = ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d", "d", "d"]

    alpha = krippendorff_alpha(_matrix([ben, gerry]))

    assert round(alpha, 3) == 0.692
    assert alpha == pytest.approx(155 / 224, abs=1e-12)


def test_alpha_matches_krippendorff_2011_nominal_four_observers_missing_data() -> None:
    # Section C: 4 observers × 12 units, values 1–5, missing data; unit 11 has one value and
    # contributes nothing. Printed α = 0.743 (exactly 113/152).
    ratings = _matrix(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
        ]
    )

    alpha = krippendorff_alpha(ratings)

    assert round(alpha, 3) == 0.743
    assert alpha == pytest.approx(113 / 152, abs=1e-12)


def test_alpha_matches_wikipedia_computational_example() -> None:
    # Wikipedia "Krippendorff's alpha", "A computational example": 3 coders × 15 units,
    # nominal α = 0.691 (exactly 56/81).
    ratings = _matrix(
        [
            [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
            [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
            [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
        ]
    )

    alpha = krippendorff_alpha(ratings)

    assert round(alpha, 3) == 0.691
    assert alpha == pytest.approx(56 / 81, abs=1e-12)


# --- Percent agreement, κ pairs, α edge cases ---------------------------------------------


def test_percent_agreement_averages_pairs_within_items() -> None:
    ratings = [
        Rating(1, "a", YES),
        Rating(1, "b", YES),
        Rating(1, "c", NO),  # 1 of 3 pairs agree
        Rating(2, "a", NO),
        Rating(2, "b", NO),  # 1 of 1
        Rating(3, "a", YES),  # rated once: says nothing
    ]

    assert percent_agreement(ratings) == pytest.approx((1 / 3 + 1) / 2, abs=1e-12)


def test_percent_agreement_is_none_without_a_doubly_rated_item() -> None:
    assert percent_agreement([Rating(1, "a", YES), Rating(2, "b", YES)]) is None


def test_kappa_is_none_when_both_raters_give_one_and_the_same_judgment() -> None:
    ratings = [Rating(i, r, YES) for i in range(5) for r in ("a", "b")]

    assert cohen_kappa_pairs(ratings) == [
        PairKappa(rater_a="a", rater_b="b", n_items=5, kappa=None, percent=1.0)
    ]


def test_kappa_is_zero_when_each_rater_is_constant_on_a_different_judgment() -> None:
    ratings = [Rating(i, "a", YES) for i in range(3)] + [Rating(i, "b", NO) for i in range(3)]

    assert cohen_kappa_pairs(ratings)[0].kappa == 0.0


def test_kappa_pairs_cover_every_pair_with_shared_items_only() -> None:
    ratings = [
        Rating(1, "ann", YES),
        Rating(1, "bob", NO),
        Rating(2, "bob", YES),
        Rating(2, "cy", YES),
        Rating(3, "dee", YES),  # shares nothing
    ]

    pairs = cohen_kappa_pairs(ratings)

    assert [(p.rater_a, p.rater_b, p.n_items) for p in pairs] == [
        ("ann", "bob", 1),
        ("bob", "cy", 1),
    ]


def test_alpha_is_none_without_variation_or_pairs() -> None:
    assert krippendorff_alpha([Rating(i, r, YES) for i in range(4) for r in "ab"]) is None
    assert krippendorff_alpha([Rating(1, "a", YES), Rating(2, "a", NO)]) is None
    assert krippendorff_alpha([]) is None


def test_alpha_ignores_singly_rated_items() -> None:
    ratings = _matrix([[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]])

    extra = [Rating("lonely", "coder0", "7")]

    assert krippendorff_alpha(ratings + extra) == krippendorff_alpha(ratings)


def test_ordinal_alpha_drops_judgments_off_the_scale() -> None:
    scale = [CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED]
    ratings = [
        Rating(1, "a", SUPPORTED),
        Rating(1, "b", PARTIAL),
        Rating(2, "a", CONTRADICTED),
        Rating(2, "b", CONTRADICTED),
        Rating(3, "a", UNCLEAR),
        Rating(3, "b", SUPPORTED),
    ]

    ordinal = krippendorff_alpha(ratings, "ordinal", order=scale)
    nominal_on_scale = krippendorff_alpha(ratings[:4])

    # Neighbouring disagreement costs less on an ordinal scale than as categories.
    assert ordinal > nominal_on_scale


def test_ordinal_alpha_matches_the_package_on_krippendorffs_section_c() -> None:
    # The package on the printed matrix is the reference; ours goes through unit counts.
    import krippendorff
    import numpy as np

    rows = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    expected = krippendorff.alpha(
        reliability_data=np.array(rows, dtype=float), level_of_measurement="ordinal"
    )

    found = krippendorff_alpha(_matrix(rows), "ordinal", order=["1", "2", "3", "4", "5"])

    assert found == pytest.approx(expected, abs=1e-12)
    assert found == alpha_counts(count_ratings(_matrix(rows))[0], order=["1", "2", "3", "4", "5"])


def test_ratings_are_counted_into_unit_profiles_and_pair_cells() -> None:
    ratings = [
        Rating(1, "b", YES),
        Rating(1, "a", NO),
        Rating(2, "a", YES),
        Rating(2, "b", ""),
        Rating(3, "a", YES),
        Rating(3, "b", YES),
        Rating(3, "c", PARTIAL),
    ]

    assert count_ratings(ratings) == (
        {(NOT_SUPPORTED, SUPPORTED): 1, (SUPPORTED,): 1, (PARTIAL, SUPPORTED, SUPPORTED): 1},
        {
            ("a", "b"): {(NO, YES): 1, (YES, YES): 1},
            ("a", "c"): {(YES, PARTIAL): 1},
            ("b", "c"): {(YES, PARTIAL): 1},
        },
    )
    assert summarize(ratings) == summarize_counts(*count_ratings(ratings))


def test_alpha_refuses_levels_that_mean_nothing_for_categories() -> None:
    with pytest.raises(ValueError, match="interval"):
        krippendorff_alpha([Rating(1, "a", YES)], "interval")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="order"):
        krippendorff_alpha([Rating(1, "a", YES)], "ordinal")


def test_blank_judgments_are_skipped_and_the_last_rating_wins() -> None:
    ratings = [
        Rating(1, "a", YES),
        Rating(1, "b", ""),
        Rating(2, "a", NO),
        Rating(2, "b", YES),
        Rating(2, "b", NO),  # re-saved
    ]

    assert percent_agreement(ratings) == 1.0


# --- Binary collapse ----------------------------------------------------------------------


def test_only_supported_counts_as_supported() -> None:
    assert {code: collapse_binary(code) for code in JUDGMENT_CODES} == {
        SUPPORTED: SUPPORTED,
        PARTIAL: BINARY_NOT,
        NOT_SUPPORTED: BINARY_NOT,
        CONTRADICTED: BINARY_NOT,
        WRONG_CITATION: BINARY_NOT,
        INACCESSIBLE: BINARY_NOT,
        UNCLEAR: BINARY_NOT,
    }


def test_binary_collapse_turns_nearby_disagreements_into_agreement() -> None:
    ratings = [
        Rating(1, "a", NOT_SUPPORTED),
        Rating(1, "b", CONTRADICTED),
        Rating(2, "a", SUPPORTED),
        Rating(2, "b", SUPPORTED),
        Rating(3, "a", PARTIAL),
        Rating(3, "b", SUPPORTED),
    ]

    assert percent_agreement(ratings) == pytest.approx(1 / 3, abs=1e-12)
    assert percent_agreement(ratings, binary=True) == pytest.approx(2 / 3, abs=1e-12)
    assert summarize(ratings, binary=True).pairs[0].percent == pytest.approx(2 / 3, abs=1e-12)


def test_summary_matches_the_single_statistics() -> None:
    ratings = _two_by_two(20, 5, 10, 15) + [Rating("solo", "C", YES)]

    summary = summarize(ratings)

    assert summary.n_items == 50
    assert summary.n_raters == 2
    assert summary.percent == percent_agreement(ratings)
    assert summary.alpha == krippendorff_alpha(ratings)
    assert list(summary.pairs) == cohen_kappa_pairs(ratings)


# --- Confusion matrices -------------------------------------------------------------------


def test_confusion_counts_and_lists_items_per_cell() -> None:
    ratings = [
        Rating("c1", "ann", SUPPORTED),
        Rating("c1", "bob", SUPPORTED),
        Rating("c2", "ann", SUPPORTED),
        Rating("c2", "bob", CONTRADICTED),
        Rating("c3", "ann", CONTRADICTED),
        Rating("c3", "bob", CONTRADICTED),
        Rating("c4", "ann", SUPPORTED),
    ]

    matrix = confusion(ratings, "ann", "bob")

    assert matrix == ConfusionMatrix(
        rows="ann",
        cols="bob",
        labels=(SUPPORTED, CONTRADICTED),
        counts=((1, 1), (0, 1)),
        items={
            (SUPPORTED, SUPPORTED): ("c1",),
            (SUPPORTED, CONTRADICTED): ("c2",),
            (CONTRADICTED, CONTRADICTED): ("c3",),
        },
    )
    assert matrix.n == 3
    assert matrix.cell(CONTRADICTED, SUPPORTED) == ()


def test_confusion_with_fixed_labels_counts_what_it_leaves_out() -> None:
    ratings = [
        Rating(1, "a", SUPPORTED),
        Rating(1, "b", UNCLEAR),
        Rating(2, "a", SUPPORTED),
        Rating(2, "b", SUPPORTED),
    ]

    matrix = confusion(ratings, "a", "b", labels=[SUPPORTED, PARTIAL])

    assert matrix.counts == ((1, 0), (0, 0))
    assert matrix.unlisted == 1


def test_binary_confusion_uses_the_two_binary_labels() -> None:
    ratings = [Rating(1, "a", PARTIAL), Rating(1, "b", SUPPORTED)]

    matrix = confusion(ratings, "a", "b", binary=True)

    assert matrix.labels == (SUPPORTED, BINARY_NOT)
    assert matrix.counts == ((0, 0), (1, 0))


def test_sheet_confusion_orders_varying_reviewers_by_name() -> None:
    ratings = [
        Rating(1, "zoe", NO),
        Rating(1, "amy", YES),  # amy first
        Rating(2, "bob", YES),
        Rating(2, "cat", YES),
        Rating(3, "amy", YES),
        Rating(3, "bob", NO),
        Rating(3, "cat", NO),  # three raters, no explicit order: left out
    ]

    matrix = sheet_confusion(ratings)

    assert (matrix.rows, matrix.cols) == ("first", "second")
    assert matrix.counts == ((1, 1), (0, 0))
    assert matrix.cell(YES, NO) == (1,)


def test_sheet_confusion_takes_explicit_order_per_item() -> None:
    ratings = [
        Rating(1, "zoe", NO),
        Rating(1, "amy", YES),
        Rating(3, "amy", YES),
        Rating(3, "bob", NO),
        Rating(3, "cat", NO),
    ]

    matrix = sheet_confusion(ratings, order={1: ("zoe", "amy"), 3: ("cat", "amy")})

    assert matrix.labels == (YES, NO)
    assert matrix.counts == ((0, 0), (2, 0))
    assert matrix.cell(NO, YES) == (1, 3)


# --- Evidence and matcher -----------------------------------------------------------------


def test_evidence_jaccard() -> None:
    assert evidence_jaccard(frozenset(), frozenset()) == 1.0
    assert evidence_jaccard(frozenset({1}), frozenset()) == 0.0
    assert evidence_jaccard(frozenset({1, 2, 3}), frozenset({2, 3, 4})) == 0.5


def test_mean_evidence_jaccard_over_items_with_two_sets() -> None:
    evidence = {
        (1, "a"): frozenset({"p1:s1", "p1:s2"}),
        (1, "b"): frozenset({"p1:s1"}),
        (2, "a"): frozenset(),
        (2, "b"): frozenset(),
        (3, "a"): frozenset({"p2:s1"}),  # alone: left out
    }

    assert mean_evidence_jaccard(evidence) == pytest.approx((0.5 + 1.0) / 2, abs=1e-12)
    assert mean_evidence_jaccard({(3, "a"): frozenset()}) is None


def test_matcher_acceptance_counts_kept_and_novel_sentences() -> None:
    highlights = {1: frozenset({"s1", "s2"}), 2: frozenset()}
    evidence = {
        (1, "a"): frozenset({"s1", "s2"}),  # kept both
        (1, "b"): frozenset({"s1", "s9"}),  # kept one, one novel
        (2, "a"): frozenset({"s4"}),  # nothing shown: novel
        (3, "a"): frozenset({"s5"}),  # never through the matcher: left out
    }

    assert matcher_acceptance(evidence, highlights) == MatcherAcceptance(
        sheets=3,
        highlighted=4,
        kept=3,
        chosen=5,
        novel=2,
        acceptance=0.75,
        novel_share=0.4,
    )


def test_matcher_acceptance_shows_automation_bias() -> None:
    highlights = {i: frozenset({f"{i}:0", f"{i}:1"}) for i in range(10)}
    evidence = {(i, r): highlights[i] for i in range(10) for r in "ab"}

    result = matcher_acceptance(evidence, highlights)

    assert (result.acceptance, result.novel_share) == (1.0, 0.0)


def test_matcher_acceptance_shares_are_none_when_nothing_to_divide() -> None:
    result = matcher_acceptance({(1, "a"): frozenset()}, {1: frozenset()})

    assert (result.acceptance, result.novel_share) == (None, None)


# --- Automatic judge against gold ---------------------------------------------------------


def test_rater_vs_gold_reports_accuracy_kappa_and_per_label_scores() -> None:
    gold = {1: YES, 2: YES, 3: NO, 4: NO, 5: CONTRADICTED, 6: YES}
    predictions = {1: YES, 2: NO, 3: NO, 4: NO, 5: NO, 7: YES}  # 6 unjudged, 7 not gold

    report = rater_vs_gold(predictions, gold)

    assert report.n == 5
    assert report.accuracy == 0.6
    assert report.disagreements == (2, 5)
    assert report.per_label == {
        SUPPORTED: LabelScore(precision=1.0, recall=0.5, support=2),
        NOT_SUPPORTED: LabelScore(precision=0.5, recall=1.0, support=2),
        CONTRADICTED: LabelScore(precision=None, recall=0.0, support=1),
    }
    assert report.confusion.counts == ((1, 1, 0), (0, 2, 0), (0, 1, 0))
    assert (report.confusion.rows, report.confusion.cols) == ("gold", "rater")
    # p_o = 3/5; p_e = (2·1 + 2·4 + 1·0) / 25 = 10/25; κ = (0.6 − 0.4) / 0.6.
    assert report.kappa == pytest.approx(1 / 3, abs=1e-12)


def test_rater_vs_gold_binary() -> None:
    report = rater_vs_gold({1: NO, 2: YES}, {1: CONTRADICTED, 2: YES}, binary=True)

    assert (report.accuracy, report.kappa, report.disagreements) == (1.0, 1.0, ())


def test_rater_vs_gold_without_overlap() -> None:
    report = rater_vs_gold({1: YES}, {2: YES})

    assert (report.n, report.accuracy, report.kappa, report.per_label) == (0, None, None, {})
    assert report.confusion.n == 0


# --- Needs adjudication -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (CONTRADICTED, SUPPORTED, Severity.CONTRADICTED_VS_SUPPORTED),
        (SUPPORTED, CONTRADICTED, Severity.CONTRADICTED_VS_SUPPORTED),
        (PARTIAL, SUPPORTED, Severity.JUDGMENT),
        (CONTRADICTED, NOT_SUPPORTED, Severity.JUDGMENT),
    ],
)
def test_judgment_differences_rank_by_severity(a: str, b: str, expected: Severity) -> None:
    assert disagreement(a, b) == Disagreement(expected, evidence_jaccard=1.0)


def test_different_wrong_citation_passage_is_a_disagreement() -> None:
    found = disagreement(WRONG_CITATION, WRONG_CITATION, a_wrong_passage=2, b_wrong_passage=3)

    assert found == Disagreement(Severity.WRONG_PASSAGE, evidence_jaccard=1.0)


def test_a_passage_left_on_another_judgment_is_not_a_disagreement() -> None:
    assert disagreement(SUPPORTED, SUPPORTED, a_wrong_passage=2) is None


def test_evidence_only_difference_respects_the_threshold() -> None:
    a, b = frozenset({1, 2, 3, 4}), frozenset({1, 2, 3})  # Jaccard 0.75

    assert disagreement(YES, YES, a_evidence=a, b_evidence=b) == Disagreement(
        Severity.EVIDENCE, evidence_jaccard=0.75
    )
    assert disagreement(YES, YES, a_evidence=a, b_evidence=b, jaccard_threshold=0.75) is None
    assert disagreement(YES, YES, a_evidence=a, b_evidence=b, jaccard_threshold=0.8) == (
        Disagreement(Severity.EVIDENCE, evidence_jaccard=0.75)
    )


def test_judgment_outranks_evidence_and_keeps_its_jaccard() -> None:
    found = disagreement(YES, CONTRADICTED, a_evidence=frozenset({1}), b_evidence=frozenset({2}))

    assert found == Disagreement(Severity.CONTRADICTED_VS_SUPPORTED, evidence_jaccard=0.0)


def test_severities_sort_most_severe_first() -> None:
    assert sorted([Severity.EVIDENCE, Severity.CONTRADICTED_VS_SUPPORTED, Severity.JUDGMENT]) == [
        Severity.CONTRADICTED_VS_SUPPORTED,
        Severity.JUDGMENT,
        Severity.EVIDENCE,
    ]


def test_unanimous_needs_identical_judgment_passage_and_evidence() -> None:
    same = frozenset({"s1"})

    assert is_unanimous(YES, YES, a_evidence=same, b_evidence=same)
    assert is_unanimous(WRONG_CITATION, WRONG_CITATION, a_wrong_passage=1, b_wrong_passage=1)
    assert not is_unanimous(WRONG_CITATION, WRONG_CITATION, a_wrong_passage=1, b_wrong_passage=2)
    assert not is_unanimous(YES, NO)
    assert not is_unanimous(YES, YES, a_evidence=same, b_evidence=frozenset())


# --- Properties ---------------------------------------------------------------------------

judgments = st.sampled_from(sorted(JUDGMENT_CODES)) | st.text(max_size=3)
ratings_strategy = st.lists(
    st.builds(
        Rating,
        item=st.integers(0, 12),
        rater=st.sampled_from(["a", "b", "c", "d"]),
        judgment=judgments,
    ),
    max_size=60,
)
sentence_sets = st.frozensets(st.integers(0, 8), max_size=6)


def _in_range(value: float | None) -> bool:
    return value is None or (math.isfinite(value) and -1.0 <= value <= 1.0)


@settings(max_examples=300)
@given(ratings_strategy)
def test_statistics_stay_in_range_and_never_raise(ratings: list[Rating]) -> None:
    for binary in (False, True):
        summary = summarize(ratings, binary=binary)

        assert _in_range(summary.alpha)
        assert all(_in_range(pair.kappa) for pair in summary.pairs)
        assert summary.percent is None or 0.0 <= summary.percent <= 1.0
        confusion(ratings, "a", "b", binary=binary)
        sheet_confusion(ratings, binary=binary)


@given(
    st.lists(st.sampled_from(sorted(JUDGMENT_CODES)), min_size=1, max_size=40),
    st.integers(2, 4),
)
def test_identical_raters_agree_perfectly(labels: list[str], n_raters: int) -> None:
    ratings = [Rating(i, f"r{r}", label) for i, label in enumerate(labels) for r in range(n_raters)]
    varied = len(set(labels)) >= 2

    summary = summarize(ratings)

    assert summary.percent == 1.0
    assert summary.alpha == (1.0 if varied else None)
    assert all(pair.kappa == (1.0 if varied else None) for pair in summary.pairs)


@given(sentence_sets, sentence_sets)
def test_evidence_jaccard_is_symmetric_and_bounded(
    a: frozenset[Hashable], b: frozenset[Hashable]
) -> None:
    assert evidence_jaccard(a, b) == evidence_jaccard(b, a)
    assert 0.0 <= evidence_jaccard(a, b) <= 1.0
    assert (evidence_jaccard(a, b) == 1.0) == (a == b)


@given(
    st.dictionaries(
        st.tuples(st.integers(0, 5), st.sampled_from("ab")), sentence_sets, max_size=12
    ),
    st.dictionaries(st.integers(0, 7), sentence_sets, max_size=8),
)
def test_evidence_statistics_never_raise(
    evidence: dict[tuple[int, str], frozenset[Hashable]],
    highlights: dict[int, frozenset[Hashable]],
) -> None:
    mean = mean_evidence_jaccard(evidence)
    result = matcher_acceptance(evidence, highlights)

    assert mean is None or 0.0 <= mean <= 1.0
    assert result.kept <= result.highlighted
    assert result.novel <= result.chosen


@given(
    st.dictionaries(st.integers(0, 15), judgments, max_size=20),
    st.dictionaries(st.integers(0, 15), judgments, max_size=20),
)
def test_rater_vs_gold_never_raises(predictions: dict[int, str], gold: dict[int, str]) -> None:
    report = rater_vs_gold(predictions, gold)

    assert report.confusion.n == report.n
    assert _in_range(report.kappa)


# --- The same statistics from counts ------------------------------------------------------


def _counts(ratings: list[Rating]) -> tuple[Counter, dict]:
    """Unit profiles and pair tables, as the dashboard's GROUP BY queries return them."""
    table: dict[Hashable, dict[str, str]] = {}
    for rating in ratings:
        if rating.judgment:
            table.setdefault(rating.item, {})[rating.rater] = rating.judgment
    profiles = Counter(unit_profile(row.values()) for row in table.values())
    pairs: dict = defaultdict(Counter)
    for row in table.values():
        for a, b in ((a, b) for a in row for b in row if a < b):
            # Either order is allowed: store some pairs reversed to prove it.
            if ord(a[0]) % 2:
                pairs[b, a][row[b], row[a]] += 1
            else:
                pairs[a, b][row[a], row[b]] += 1
    return profiles, pairs


def _same_summary(from_counts, from_ratings) -> None:
    assert from_counts.n_items == from_ratings.n_items
    assert from_counts.n_raters == from_ratings.n_raters
    for x, y in (
        (from_counts.percent, from_ratings.percent),
        (from_counts.alpha, from_ratings.alpha),
    ):
        assert (x is None) == (y is None)
        assert x == pytest.approx(y, abs=1e-9) if x is not None else True
    assert [(p.rater_a, p.rater_b, p.n_items) for p in from_counts.pairs] == [
        (p.rater_a, p.rater_b, p.n_items) for p in from_ratings.pairs
    ]
    for x, y in zip(from_counts.pairs, from_ratings.pairs, strict=True):
        assert x.percent == pytest.approx(y.percent, abs=1e-12)
        assert (x.kappa is None) == (y.kappa is None)
        assert x.kappa == pytest.approx(y.kappa, abs=1e-9) if x.kappa is not None else True


def test_counts_reproduce_the_published_kappa_and_alpha_examples() -> None:
    kappa_table = {(YES, YES): 20, (YES, NO): 5, (NO, YES): 10, (NO, NO): 15}
    profiles = Counter()
    for (a, b), n in kappa_table.items():
        profiles[unit_profile([a, b])] += n

    [pair] = summarize_counts(profiles, {("A", "B"): kappa_table}).pairs

    assert (pair.n_items, pair.percent) == (50, pytest.approx(0.7, abs=1e-12))
    assert pair.kappa == pytest.approx(0.4, abs=1e-12)
    # Krippendorff (2011), section C, and Wikipedia's computational example.
    section_c = _matrix(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
        ]
    )
    wikipedia = _matrix(
        [
            [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
            [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
            [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
        ]
    )
    assert summarize_counts(*_counts(section_c)).alpha == pytest.approx(113 / 152, abs=1e-12)
    assert summarize_counts(*_counts(wikipedia)).alpha == pytest.approx(56 / 81, abs=1e-12)


@settings(max_examples=300)
@given(ratings_strategy)
def test_counts_give_the_same_summary_as_ratings(ratings: list[Rating]) -> None:
    profiles, pairs = _counts(ratings)

    for binary in (False, True):
        _same_summary(
            summarize_counts(profiles, pairs, binary=binary), summarize(ratings, binary=binary)
        )


@given(ratings_strategy)
def test_confusion_from_counts_matches_confusion_from_ratings(ratings: list[Rating]) -> None:
    _, pairs = _counts(ratings)
    cells = Counter(pairs.get(("a", "b"), {}))
    for (b, a), n in pairs.get(("b", "a"), {}).items():
        cells[a, b] += n

    for binary in (False, True):
        expected = confusion(ratings, "a", "b", binary=binary)
        found = confusion_counts(cells, rows="a", cols="b", binary=binary)

        assert (found.labels, found.counts, found.unlisted) == (
            expected.labels,
            expected.counts,
            expected.unlisted,
        )


def test_confusion_counts_with_fixed_labels_counts_what_it_leaves_out() -> None:
    matrix = confusion_counts(
        {(SUPPORTED, UNCLEAR): 2, (SUPPORTED, SUPPORTED): 1},
        [SUPPORTED, PARTIAL],
        rows="a",
        cols="b",
    )

    assert (matrix.counts, matrix.unlisted, matrix.items) == (((1, 0), (0, 0)), 2, {})


@given(
    st.dictionaries(st.integers(0, 15), judgments, max_size=20),
    st.dictionaries(st.integers(0, 15), judgments, max_size=20),
)
def test_rater_vs_gold_from_counts_matches_items(
    predictions: dict[int, str], gold: dict[int, str]
) -> None:
    cells = Counter(
        (gold[item], predictions[item]) for item in gold if gold[item] and predictions.get(item)
    )

    for binary in (False, True):
        expected = rater_vs_gold(predictions, gold, binary=binary)
        found = rater_vs_gold_counts(cells, binary=binary)

        assert (found.n, found.differing, found.per_label) == (
            expected.n,
            len(expected.disagreements),
            expected.per_label,
        )
        assert (found.confusion.labels, found.confusion.counts) == (
            expected.confusion.labels,
            expected.confusion.counts,
        )
        assert found.accuracy == expected.accuracy
        assert found.kappa == (
            pytest.approx(expected.kappa) if expected.kappa is not None else None
        )


def test_rater_vs_gold_counts_pins_the_worked_example() -> None:
    # The items test above as counts: p_o = 3/5, κ = 1/3.
    cells = {(YES, YES): 1, (YES, NO): 1, (NO, NO): 2, (CONTRADICTED, NO): 1}

    report = rater_vs_gold_counts(cells)

    assert (report.n, report.accuracy, report.differing, report.disagreements) == (5, 0.6, 2, ())
    assert report.kappa == pytest.approx(1 / 3, abs=1e-12)
    assert report.per_label[CONTRADICTED] == LabelScore(precision=None, recall=0.0, support=1)


@given(
    st.dictionaries(
        st.tuples(st.integers(0, 5), st.sampled_from("ab")), sentence_sets, max_size=12
    ),
    st.dictionaries(st.integers(0, 7), sentence_sets, max_size=8),
)
def test_matcher_sums_match_matcher_acceptance(
    evidence: dict[tuple[int, str], frozenset[Hashable]],
    highlights: dict[int, frozenset[Hashable]],
) -> None:
    per_sheet = [
        sheet_matcher_counts(sentences, highlights[item])
        for (item, _), sentences in evidence.items()
        if item in highlights
    ]
    totals = [sum(column) for column in zip(*per_sheet, strict=True)] or [0, 0, 0, 0]

    found = matcher_acceptance_sums(
        sheets=len(per_sheet),
        highlighted=totals[0],
        kept=totals[1],
        chosen=totals[2],
        novel=totals[3],
    )

    assert found == matcher_acceptance(evidence, highlights)
