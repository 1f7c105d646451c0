"""How far an automatic judge can be trusted: its verdicts against adjudicated gold, overall and
split by system, topic, machine trust label and "claim has numbers", with bootstrap intervals.

Plain Python (numpy for the resampling); the point figures come from audit.agreement so a
judge reads the same here as on the agreement dashboard.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from audit.agreement import RaterReport, rater_vs_gold

if TYPE_CHECKING:
    import numpy as np

SEED = 20261202
ROUNDS = 1000
LEVEL = 0.95
Z = 1.959964  # the normal quantile of a two-sided 95% interval
HAS_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class GoldPair:
    """One claim with adjudicated gold and the judge's verdict, and what it is split by."""

    claim_id: int
    gold: str
    judge: str
    system: str
    topics: tuple[str, ...]
    trust: str  # the matcher's label, "" when unchecked
    has_numbers: bool


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Calibration:
    """One group of gold claims: the judge's scores with their 95% bootstrap intervals."""

    name: str
    n: int
    report: RaterReport
    accuracy_ci: Interval
    kappa_ci: Interval


@dataclass(frozen=True)
class Split:
    by: str
    groups: tuple[Calibration, ...]


def claim_has_numbers(text: str) -> bool:
    return bool(HAS_NUMBER.search(text))


def calibrate(
    pairs: Sequence[GoldPair], name: str = "All gold claims", *, seed: int = SEED
) -> Calibration:
    """Accuracy, κ, per-judgment precision/recall and the confusion matrix, rows gold.

    Each interval is the wider of the bootstrap's and the small-sample one (see
    small_sample_intervals): on a few gold claims that all agree the bootstrap resamples
    the same agreement every time and reads κ 1.00 [1.00–1.00]."""
    gold = {p.claim_id: p.gold for p in pairs}
    judged = {p.claim_id: p.judge for p in pairs}
    report = rater_vs_gold(judged, gold)
    golds, judges = [p.gold for p in pairs], [p.judge for p in pairs]
    accuracy_ci, kappa_ci = bootstrap(golds, judges, seed=seed)
    accuracy_wide, kappa_wide = small_sample_intervals(golds, judges)
    return Calibration(
        name=name,
        n=report.n,
        report=report,
        accuracy_ci=_wider(accuracy_ci, accuracy_wide),
        kappa_ci=_wider(kappa_ci, kappa_wide),
    )


def wilson(successes: int, n: int, z: float = Z) -> Interval:
    """The Wilson score interval of a proportion: unlike the bootstrap's, it does not
    shrink to a point at 0 or n successes (3 of 3 agreeing gives 0.44–1.00)."""
    if n == 0:
        return Interval(None, None)
    share = successes / n
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    return Interval(max(0.0, centre - spread), min(1.0, centre + spread))


def small_sample_intervals(gold: Sequence[str], judge: Sequence[str]) -> tuple[Interval, Interval]:
    """Accuracy's Wilson interval, and κ's from it: the observed agreement's Wilson bounds
    put through κ = (pₒ − pₑ) / (1 − pₑ), with the chance agreement pₑ of the two raters'
    label shares held. None with fewer than two claims, and κ none when pₑ is 1."""
    n = len(gold)
    if n < 2:
        return Interval(None, None), Interval(None, None)
    agreeing = sum(g == j for g, j in zip(gold, judge, strict=True))
    accuracy = wilson(agreeing, n)
    gold_counts, judge_counts = Counter(gold), Counter(judge)
    chance = sum(gold_counts[label] * judge_counts[label] for label in gold_counts) / (n * n)
    if chance >= 1 or accuracy.low is None or accuracy.high is None:
        return accuracy, Interval(None, None)
    low = (accuracy.low - chance) / (1 - chance)
    high = (accuracy.high - chance) / (1 - chance)
    return accuracy, Interval(max(-1.0, low), min(1.0, high))


def _wider(first: Interval, second: Interval) -> Interval:
    """The interval covering both; an interval missing at one end takes the other's."""
    lows = [value for value in (first.low, second.low) if value is not None]
    highs = [value for value in (first.high, second.high) if value is not None]
    return Interval(min(lows) if lows else None, max(highs) if highs else None)


def splits(pairs: Sequence[GoldPair], *, seed: int = SEED) -> tuple[Split, ...]:
    """The same figures per system, per topic, per machine label and by "has numbers"."""

    def split(by: str, key) -> Split:
        groups: dict[str, list[GoldPair]] = {}
        for pair in pairs:
            for value in key(pair):
                groups.setdefault(value, []).append(pair)
        return Split(
            by=by,
            groups=tuple(
                calibrate(members, name, seed=seed) for name, members in sorted(groups.items())
            ),
        )

    return (
        split("System", lambda p: [p.system]),
        split("Topic", lambda p: list(p.topics) or ["(no topic)"]),
        split("Machine trust label", lambda p: [p.trust or "(not checked)"]),
        split("Claim has numbers", lambda p: ["has numbers" if p.has_numbers else "no numbers"]),
    )


def bootstrap(
    gold: Sequence[str], judge: Sequence[str], *, seed: int = SEED, rounds: int = ROUNDS
) -> tuple[Interval, Interval]:
    """Percentile intervals of accuracy and Cohen's κ over `rounds` resamples of the claims.

    Seeded, so a page shows the same interval every time. A resample where κ is undefined
    (one label only) is left out of κ's interval; with fewer than two claims there is none.
    """
    # Imported here: numpy takes ~0.1 s to load, which every command and web process that
    # merely imports the judges' code would pay at start (an import's own start-up).
    import numpy as np

    n = len(gold)
    if n < 2:
        return Interval(None, None), Interval(None, None)
    labels = sorted(set(gold) | set(judge))
    code = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    true = np.array([code[g] for g in gold], dtype=np.intp)
    pred = np.array([code[j] for j in judge], dtype=np.intp)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(rounds, n))
    t, p = true[picks], pred[picks]
    agree = (t == p).mean(axis=1)
    # Per resample: marginal counts of each label for gold and judge.
    offsets = (np.arange(rounds) * k)[:, None]
    gold_counts = np.bincount((t + offsets).ravel(), minlength=rounds * k).reshape(rounds, k)
    judge_counts = np.bincount((p + offsets).ravel(), minlength=rounds * k).reshape(rounds, k)
    chance = (gold_counts * judge_counts).sum(axis=1) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(chance < 1, (agree - chance) / (1 - chance), np.nan)
    return _interval(agree), _interval(kappa[~np.isnan(kappa)])


def _interval(values: np.ndarray) -> Interval:
    import numpy as np

    if values.size == 0:
        return Interval(None, None)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


@dataclass(frozen=True)
class Threshold:
    """What a lead wrote down before looking: κ's interval must reach `min_kappa` at its low
    end, over at least `min_gold` gold claims, and never fewer than the operator's `floor`."""

    min_kappa: float
    min_gold: int
    floor: int = 0


def meets(threshold: Threshold, calibration: Calibration) -> tuple[bool, str]:
    """Whether a judge's calibration meets the threshold, and why not in words. The point κ
    never decides: only the low end of its interval."""
    if calibration.n < threshold.floor:
        return (
            False,
            f"{calibration.n} gold claims; no judge is accepted on fewer than {threshold.floor}.",
        )
    if calibration.n < threshold.min_gold:
        return False, f"{calibration.n} gold claims; the threshold needs {threshold.min_gold}."
    low = calibration.kappa_ci.low
    if low is None:
        return False, "κ has no interval on these gold claims."
    if low < threshold.min_kappa:
        return (
            False,
            f"κ’s interval starts at {low:.2f}, below the threshold {threshold.min_kappa:.2f}.",
        )
    return True, f"κ’s interval starts at {low:.2f}, at or above {threshold.min_kappa:.2f}."
