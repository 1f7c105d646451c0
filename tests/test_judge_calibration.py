"""A judge against gold with bootstrap intervals (audit/judge_calibration.py), no database."""

from __future__ import annotations

import pytest

from audit.judge_calibration import GoldPair, Threshold, bootstrap, calibrate, meets, splits


def _pair(i, gold, judge, system="a", topics=(), trust="", numbers=False):
    return GoldPair(i, gold, judge, system, tuple(topics), trust, numbers)


PAIRS = [
    _pair(1, "supported", "supported", topics=["pay"], numbers=True),
    _pair(2, "supported", "supported", system="b", trust="supported"),
    _pair(3, "not_supported", "not_supported", topics=["pay", "leave"]),
    _pair(4, "not_supported", "supported", system="b"),
    _pair(5, "contradicted", "contradicted"),
    _pair(6, "supported", "supported"),
]


def test_point_figures_match_the_agreement_dashboard_and_name_the_disagreement():
    result = calibrate(PAIRS)

    assert result.n == 6
    assert result.report.accuracy == pytest.approx(5 / 6)
    assert result.report.disagreements == (4,)
    assert result.report.per_label["not_supported"].recall == pytest.approx(0.5)
    assert result.report.per_label["supported"].precision == pytest.approx(3 / 4)


def test_intervals_are_seeded_and_hold_the_point_figure():
    first = calibrate(PAIRS)
    again = calibrate(PAIRS)

    assert first.kappa_ci == again.kappa_ci
    assert first.kappa_ci.low <= first.report.kappa <= first.kappa_ci.high
    assert first.accuracy_ci.low <= 5 / 6 <= first.accuracy_ci.high
    assert first.accuracy_ci.high == 1.0


def test_perfect_agreement_has_a_point_interval_and_one_claim_has_none():
    accuracy, kappa = bootstrap(["a", "b", "a", "b"], ["a", "b", "a", "b"])
    assert (accuracy.low, accuracy.high, kappa.low, kappa.high) == (1.0, 1.0, 1.0, 1.0)
    accuracy, kappa = bootstrap(["a"], ["b"])
    assert (accuracy.low, kappa.low) == (None, None)


def test_splits_by_system_topic_trust_and_numbers():
    by = {s.by: {g.name: g.n for g in s.groups} for s in splits(PAIRS)}

    assert by == {
        "System": {"a": 4, "b": 2},
        "Topic": {"(no topic)": 4, "leave": 1, "pay": 2},
        "Machine trust label": {"(not checked)": 5, "supported": 1},
        "Claim has numbers": {"has numbers": 1, "no numbers": 5},
    }


def test_a_threshold_is_met_by_the_low_end_of_kappas_interval_over_enough_gold():
    result = calibrate(PAIRS)

    assert meets(Threshold(min_kappa=-1.0, min_gold=7), result) == (
        False,
        "6 gold claims; the threshold needs 7.",
    )
    assert meets(Threshold(min_kappa=result.kappa_ci.low, min_gold=6), result)[0] is True
    assert meets(Threshold(min_kappa=result.kappa_ci.low + 0.01, min_gold=6), result)[0] is False
