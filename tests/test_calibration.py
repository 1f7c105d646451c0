"""The pure core of calibration: reviewers against gold, weekly accuracy and its chart,
agreement grouped by guideline version."""

from __future__ import annotations

from datetime import date

from audit.agreement import Rating
from audit.calibration import (
    EVIDENCE,
    JUDGMENT,
    MIN_SHEETS,
    GoldPair,
    Judged,
    VersionedSheet,
    WeekPoint,
    accuracy_chart,
    evidence_overlap,
    gold_differences,
    ratings_by_version,
    reviewer_calibration,
)


def _pair(i: int, sheet: str, gold: str, *, control: bool = False, day=date(2026, 11, 30)):
    return GoldPair(
        claim=i,
        sheet=Judged(sheet, frozenset({(1, 0, 10)})),
        gold=Judged(gold, frozenset({(1, 0, 10), (1, 11, 20)})),
        control=control,
        day=day,
    )


def test_gold_differences_name_what_differs():
    gold = Judged("supported", frozenset({(1, 0, 5)}))

    assert gold_differences(gold, gold) == ()
    assert gold_differences(Judged("unclear", frozenset()), gold) == (JUDGMENT, EVIDENCE)


def test_evidence_overlap_is_jaccard_and_none_without_evidence():
    assert evidence_overlap({(1, 0, 5)}, {(1, 0, 5), (2, 0, 5)}) == 0.5
    assert evidence_overlap(set(), set()) is None


def test_controls_and_all_adjudicated_claims_are_scored_apart():
    pairs = [_pair(i, "supported", "supported", control=i < 2) for i in range(4)] + [
        _pair(4, "unclear", "supported", control=True)
    ]

    result = reviewer_calibration(pairs)

    assert (result.controls.n, result.controls.accuracy) == (3, 2 / 3)
    assert (result.adjudicated.n, result.adjudicated.accuracy) == (5, 0.8)
    assert result.adjudicated.evidence_overlap == 0.5
    assert result.adjudicated.per_label["supported"].recall == 0.8
    # Too few controls to judge by: the alert reads every adjudicated claim.
    assert result.measured() is result.adjudicated
    assert (result.below(0.9), result.below(0.7)) == (True, False)


def test_no_alert_below_the_minimum_number_of_sheets():
    pairs = [_pair(i, "unclear", "supported") for i in range(MIN_SHEETS - 1)]

    assert reviewer_calibration(pairs).below(0.9) is False


def test_weekly_accuracy_starts_each_week_on_monday_and_charts_it():
    pairs = [
        _pair(0, "supported", "supported", day=date(2026, 11, 24)),
        _pair(1, "unclear", "supported", day=date(2026, 11, 26)),
        _pair(2, "supported", "supported", day=date(2026, 12, 2)),
    ]

    weeks = reviewer_calibration(pairs).weeks
    chart = accuracy_chart(weeks, 0.5, width=100, height=40)

    assert weeks == (
        WeekPoint(date(2026, 11, 23), 2, 0.5),
        WeekPoint(date(2026, 11, 30), 1, 1.0),
    )
    assert chart.points == "4.0,20.0 96.0,4.0"
    assert chart.threshold_y == 20.0
    assert chart.dots[0][2] == "week of 2026-11-23: 50% of 2"


def test_ratings_by_version_sets_claims_judged_across_a_change_apart():
    sheets = [
        VersionedSheet(1, "a", "supported", 1),
        VersionedSheet(1, "b", "supported", 1),
        VersionedSheet(2, "a", "supported", 1),
        VersionedSheet(2, "b", "unclear", 2),
    ]

    grouped = ratings_by_version(sheets)

    assert grouped == {
        1: [Rating(1, "a", "supported"), Rating(1, "b", "supported")],
        None: [Rating(2, "a", "supported"), Rating(2, "b", "unclear")],
    }
