"""How good a source's suggestions are against a set's gold, and whether showing suggestions
changes what reviewers decide (anchoring), every figure with a 95% interval.

Plain Python (numpy for the resampling). Each figure is a `Figure`: a value, its interval and
the count it is over; a figure over nothing is None, never NaN."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from audit.judge_calibration import (
    LEVEL,
    ROUNDS,
    SEED,
    GoldPair,
    Interval,
    calibrate,
    small_sample_intervals,
    wilson,
)
from audit.judgments import MACHINE_HINTS, NEAR_BEST, WORD
from audit.suggestions import Suggested, SuggestedSpan

Span = tuple[int, int, int]  # (passage position, start, end)

ANY_AT = 3
WHOLE_AT = 5
# Near-total acceptance on this many sheets reads as reviewers keeping what they were shown
# without looking: automation bias.
BIAS_SHARE = 0.95
BIAS_MIN_SHEETS = 20
# Below this many, a figure's interval is too wide to choose a source on.
SMALL_N = 30


@dataclass(frozen=True)
class Figure:
    """A share or score, its 95% interval and what it is over (`n`; `hits` where counted)."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    hits: int | None = None

    @property
    def small(self) -> bool:
        return 0 < self.n < SMALL_N


NONE = Figure(None, None, None, 0)


@dataclass(frozen=True)
class GoldClaim:
    """A claim's gold: its judgment, evidence spans and unsupported spans of the claim text;
    `sentences` (passage position → sentence spans) cuts gold evidence into the sentences it
    covers, so two adjacent sentences stored as one span still count as two to find."""

    claim_id: int
    judgment: str
    evidence: tuple[Span, ...] = ()
    unsupported: tuple[tuple[int, int], ...] = ()
    text: str = ""
    sentences: Mapping[int, Sequence[tuple[int, int]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ShownSheet:
    """A submitted sheet that was shown a source's suggestion: what the reviewer decided,
    and what the page showed (the suggested judgment, the highlights it marked)."""

    claim_id: int
    judgment: str
    evidence: frozenset[Span]
    suggested_judgment: str = ""
    marked: frozenset[Span] = frozenset()


@dataclass(frozen=True)
class SourceFigures:
    gold_claims: int  # gold claims of the set
    covered: int  # of those, the claims the source suggested anything for
    evidence_claims: int  # gold claims with gold evidence
    any_at_3: Figure
    whole_at_5: Figure
    token_f1: Figure
    accuracy: Figure
    kappa: Figure
    judgment_kept: Figure
    evidence_kept: Figure

    @property
    def automation_bias(self) -> bool:
        return biased(self.judgment_kept) or biased(self.evidence_kept)


@dataclass(frozen=True)
class AnchorClaim:
    """A claim's submitted sheets in order (their judgments), whether its suggestions were
    withheld, and its gold judgment ("" without gold)."""

    claim_id: int
    withheld: bool
    judgments: tuple[str, ...]
    gold: str = ""


@dataclass(frozen=True)
class AnchorGroup:
    claims: int
    agreement: Figure  # the first two reviewers of a claim agree
    kappa: Figure
    accuracy: Figure  # sheets on gold claims that match gold


@dataclass(frozen=True)
class Anchoring:
    shown: AnchorGroup
    withheld: AnchorGroup
    # shown − withheld
    agreement_difference: Figure
    kappa_difference: Figure
    accuracy_difference: Figure


def biased(kept: Figure) -> bool:
    return kept.value is not None and kept.value >= BIAS_SHARE and kept.n >= BIAS_MIN_SHEETS


# ------------------------------------------------------------------------------ spans


def overlaps(a: Span, b: Span) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def gold_units(gold: GoldClaim) -> tuple[Span, ...]:
    """Gold evidence as the sentences it covers (where the passage's sentences are known)."""
    units: list[Span] = []
    for passage, start, end in gold.evidence:
        inside = [
            (passage, max(start, s), min(end, e))
            for s, e in gold.sentences.get(passage, ())
            if s < end and start < e
        ]
        units.extend(inside or [(passage, start, end)])
    return tuple(dict.fromkeys(units))


def _spans(evidence: Iterable[SuggestedSpan]) -> list[Span]:
    return [(e.passage, e.start, e.end) for e in evidence if e.passage is not None]


def evidence_hits(gold: GoldClaim, suggested: Suggested) -> tuple[bool, bool] | None:
    """(any@3, whole-set@5) for one claim; None where gold or the source has no evidence."""
    units = gold_units(gold)
    ranked = _spans(suggested.evidence)
    if not units or not ranked:
        return None
    top_any, top_whole = ranked[:ANY_AT], ranked[:WHOLE_AT]
    hit = any(overlaps(u, s) for u in units for s in top_any)
    whole = all(any(overlaps(u, s) for s in top_whole) for u in units)
    return hit, whole


def marked(evidence: Sequence[SuggestedSpan]) -> frozenset[Span]:
    """The suggested evidence the review page marks: the top three, and where the source
    scores them, only those near the best score (as the matcher's highlights are marked)."""
    top = [e for e in evidence[:MACHINE_HINTS] if e.passage is not None]
    if top and all(e.score is not None for e in top):
        best = top[0].score or 0.0
        top = [e for e in top if (e.score or 0.0) > 0 and (e.score or 0.0) >= NEAR_BEST * best]
    return frozenset((e.passage, e.start, e.end) for e in top)


def _characters(spans: Iterable[Span]) -> frozenset[tuple[int, int]]:
    # Compared as covered characters: a sheet stores touching sentences as one span.
    return frozenset((p, i) for p, start, end in spans for i in range(start, end))


def word_tokens(text: str, spans: Iterable[tuple[int, int]]) -> frozenset[int]:
    """The claim's words (by start offset) that any span touches."""
    spans = list(spans)
    return frozenset(
        m.start()
        for m in WORD.finditer(text)
        if any(s < m.end() and m.start() < e for s, e in spans)
    )


# ------------------------------------------------------------------------------ a source


def source_figures(
    gold: Sequence[GoldClaim],
    suggested: Mapping[int, Suggested],
    shown: Sequence[ShownSheet] = (),
    *,
    judgment_shown: bool = False,
    seed: int = SEED,
) -> SourceFigures:
    """One source against gold on the gold claims, and how reviewers kept what it showed.

    Evidence figures are over the claims where both gold and the source have evidence; the
    word F1 over claims the source suggested for where either marks words (None where the
    source suggests no words at all); accuracy and κ over claims it suggested a judgment
    for. `judgment_shown`: the set shows suggested judgments, so keeping one is measured."""
    covered = [g for g in gold if g.claim_id in suggested]
    hits = [h for g in covered if (h := evidence_hits(g, suggested[g.claim_id])) is not None]
    any_hits = sum(h[0] for h in hits)
    whole_hits = sum(h[1] for h in hits)
    judged = [g for g in covered if suggested[g.claim_id].judgment]
    accuracy, kappa = judgment_figures(
        [g.judgment for g in judged], [suggested[g.claim_id].judgment for g in judged], seed=seed
    )
    judgment_kept, evidence_kept = acceptance(shown, judgment_shown=judgment_shown)
    return SourceFigures(
        gold_claims=len(gold),
        covered=len(covered),
        evidence_claims=sum(1 for g in gold if g.evidence),
        any_at_3=proportion(any_hits, len(hits)),
        whole_at_5=proportion(whole_hits, len(hits)),
        token_f1=token_f1(covered, suggested, seed=seed),
        accuracy=accuracy,
        kappa=kappa,
        judgment_kept=judgment_kept,
        evidence_kept=evidence_kept,
    )


def token_f1(
    gold: Sequence[GoldClaim], suggested: Mapping[int, Suggested], *, seed: int = SEED
) -> Figure:
    """Micro F1 of the claim's words inside gold unsupported spans against those inside the
    suggested ones, with a bootstrap interval over claims."""
    if not any(s.unsupported for s in suggested.values()):
        return NONE
    counts = []
    for g in gold:
        if g.claim_id not in suggested:
            continue
        truth = word_tokens(g.text, g.unsupported)
        guess = word_tokens(g.text, ((u.start, u.end) for u in suggested[g.claim_id].unsupported))
        if truth or guess:
            counts.append((len(truth & guess), len(guess - truth), len(truth - guess)))
    if not counts:
        return NONE
    tp, fp, fn = (sum(column) for column in zip(*counts, strict=True))
    value = _f1(tp, fp, fn)
    import numpy as np

    table = np.array(counts, dtype=float)
    picks = _picks(len(counts), seed)
    sums = table[picks].sum(axis=1)  # rounds × 3
    denominators = 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]
    rounds = np.divide(
        2 * sums[:, 0], denominators, out=np.zeros(len(sums)), where=denominators > 0
    )
    return _figure(value, _percentile(rounds), len(counts))


def _f1(tp: float, fp: float, fn: float) -> float | None:
    whole = 2 * tp + fp + fn
    return 2 * tp / whole if whole else None


def judgment_figures(
    gold: Sequence[str], guess: Sequence[str], *, seed: int = SEED
) -> tuple[Figure, Figure]:
    """Accuracy (Wilson interval) and Cohen's κ (the judges' calibration: bootstrap, widened
    on few claims) of suggested judgments against gold; κ None where undefined."""
    n = len(gold)
    if n == 0:
        return NONE, NONE
    agreeing = sum(a == b for a, b in zip(gold, guess, strict=True))
    accuracy = proportion(agreeing, n)
    pairs = [
        GoldPair(i, g, j, system="", topics=(), trust="", has_numbers=False)
        for i, (g, j) in enumerate(zip(gold, guess, strict=True))
    ]
    calibration = calibrate(pairs, seed=seed)
    kappa = calibration.report.kappa
    return accuracy, _figure(kappa, calibration.kappa_ci, n)


def acceptance(sheets: Sequence[ShownSheet], *, judgment_shown: bool) -> tuple[Figure, Figure]:
    """How often a sheet kept what it was shown as is: the suggested judgment (only where the
    set shows one), and the marked highlights as its whole evidence."""
    judged = [s for s in sheets if judgment_shown and s.suggested_judgment and s.judgment]
    judgment_kept = proportion(sum(s.judgment == s.suggested_judgment for s in judged), len(judged))
    highlighted = [s for s in sheets if s.marked]
    evidence_kept = proportion(
        sum(_characters(s.evidence) == _characters(s.marked) for s in highlighted),
        len(highlighted),
    )
    return judgment_kept, evidence_kept


# ------------------------------------------------------------------------------ anchoring


def anchoring(claims: Sequence[AnchorClaim], *, seed: int = SEED) -> Anchoring:
    """Reviewers with suggestions shown against those with them withheld: agreement between
    a claim's first two reviewers (percent and κ) and sheets' accuracy against gold, each
    group with its interval, and shown − withheld with its interval (Newcombe's for the
    percent agreement; a bootstrap of claims within each group for κ and accuracy, since a
    claim's sheets are not independent)."""
    shown = [c for c in claims if not c.withheld]
    withheld = [c for c in claims if c.withheld]
    shown_group, withheld_group = _group(shown, seed), _group(withheld, seed + 1)
    return Anchoring(
        shown=shown_group,
        withheld=withheld_group,
        agreement_difference=newcombe(shown_group.agreement, withheld_group.agreement),
        kappa_difference=_widened(
            _difference(_pairs(shown), _pairs(withheld), _kappa_rounds, _kappa_of, seed),
            newcombe(shown_group.kappa, withheld_group.kappa, bound=2.0),
        ),
        accuracy_difference=_widened(
            _difference(_graded(shown), _graded(withheld), _accuracy_rounds, _accuracy_of, seed),
            newcombe(shown_group.accuracy, withheld_group.accuracy),
        ),
    )


def _pairs(claims: Sequence[AnchorClaim]) -> list[tuple[str, str]]:
    return [(c.judgments[0], c.judgments[1]) for c in claims if len(c.judgments) >= 2]


def _graded(claims: Sequence[AnchorClaim]) -> list[tuple[int, int]]:
    """Per gold claim: (sheets matching gold, sheets)."""
    return [
        (sum(j == c.gold for j in c.judgments), len(c.judgments))
        for c in claims
        if c.gold and c.judgments
    ]


def _group(claims: Sequence[AnchorClaim], seed: int) -> AnchorGroup:
    pairs = _pairs(claims)
    graded = _graded(claims)
    agreeing = sum(a == b for a, b in pairs)
    kappa = _kappa_of(pairs)
    kappa_ci = None
    if pairs:
        # As for a judge: the wider of the bootstrap's and the small-sample interval, so a
        # few claims that all agree do not read κ 1.00 [1.00–1.00].
        _, small = small_sample_intervals([a for a, _ in pairs], [b for _, b in pairs])
        kappa_ci = _wider(_percentile(_kappa_rounds(pairs, _picks(len(pairs), seed))), small)
    right, total = sum(r for r, _ in graded), sum(t for _, t in graded)
    accuracy = proportion(right, total)
    if len(graded) >= 2:
        # The wider of the claims' bootstrap and the sheets' Wilson interval.
        rounds = _accuracy_rounds(graded, _picks(len(graded), seed))
        accuracy = _figure(accuracy.value, _wider(_percentile(rounds), accuracy), total, right)
    return AnchorGroup(
        claims=len(claims),
        agreement=proportion(agreeing, len(pairs)),
        kappa=_figure(kappa, kappa_ci, len(pairs)),
        accuracy=accuracy,
    )


def _kappa_of(pairs: Sequence[tuple[str, str]]) -> float | None:
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in first) / (n * n)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def _kappa_rounds(pairs: Sequence[tuple[str, str]], picks):  # noqa: ANN001, ANN202
    """κ of each resample (rows of `picks`), NaN where undefined (dropped by _percentile)."""
    import numpy as np

    labels = sorted({label for pair in pairs for label in pair})
    code = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    a = np.array([code[x] for x, _ in pairs], dtype=np.intp)[picks]
    b = np.array([code[y] for _, y in pairs], dtype=np.intp)[picks]
    rounds, n = picks.shape
    observed = (a == b).mean(axis=1)
    offsets = (np.arange(rounds) * k)[:, None]
    first = np.bincount((a + offsets).ravel(), minlength=rounds * k).reshape(rounds, k)
    second = np.bincount((b + offsets).ravel(), minlength=rounds * k).reshape(rounds, k)
    chance = (first * second).sum(axis=1) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def _accuracy_of(graded: Sequence[tuple[int, int]]) -> float | None:
    total = sum(t for _, t in graded)
    return sum(r for r, _ in graded) / total if total else None


def _accuracy_rounds(graded: Sequence[tuple[int, int]], picks):  # noqa: ANN001, ANN202
    import numpy as np

    table = np.array(graded, dtype=float)[picks]  # rounds × n × 2
    right, total = table[..., 0].sum(axis=1), table[..., 1].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, right / np.where(total > 0, total, 1), np.nan)


def _difference(first, second, rounds_of, value_of, seed: int) -> Figure:  # noqa: ANN001
    """first − second, with the percentile interval of resampling each group apart."""
    a, b = value_of(first), value_of(second)
    if a is None or b is None:
        return NONE
    n = len(first) + len(second)
    if len(first) < 2 or len(second) < 2:
        return Figure(a - b, None, None, n)
    import numpy as np

    spread = rounds_of(first, _picks(len(first), seed)) - rounds_of(
        second, _picks(len(second), seed + 1)
    )
    return _figure(a - b, _percentile(spread[~np.isnan(spread)]), n)


def _widened(boot: Figure, other: Figure) -> Figure:
    """The bootstrap difference with its interval widened to cover `other`'s: resampling
    groups that all agree gives a difference of 0 every time, an interval of no width."""
    if boot.value is None or other.low is None:
        return boot
    return _figure(boot.value, _wider(Interval(boot.low, boot.high), other), boot.n)


def newcombe(first: Figure, second: Figure, *, bound: float = 1.0) -> Figure:
    """first − second of two independent figures from their own intervals (Newcombe's
    hybrid score interval when both are Wilson intervals of proportions; the same recovery
    of variance from the two intervals for κ, with `bound` 2)."""
    if first.value is None or second.value is None:
        return NONE
    if None in (first.low, first.high, second.low, second.high):
        return Figure(first.value - second.value, None, None, first.n + second.n)
    d = first.value - second.value
    low = d - math.sqrt((first.value - first.low) ** 2 + (second.high - second.value) ** 2)
    high = d + math.sqrt((first.high - first.value) ** 2 + (second.value - second.low) ** 2)
    return _figure(d, Interval(max(-bound, low), min(bound, high)), first.n + second.n)


# ------------------------------------------------------------------------------ helpers


def proportion(hits: int, n: int) -> Figure:
    """hits of n with its Wilson interval; None over nothing."""
    if n == 0:
        return NONE
    interval = wilson(hits, n)
    return _figure(hits / n, interval, n, hits)


def _picks(n: int, seed: int):  # noqa: ANN202
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(ROUNDS, n))


def _percentile(values) -> Interval:  # noqa: ANN001
    import numpy as np

    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Interval(None, None)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


def _wider(first: Interval, second: Figure | Interval) -> Interval:
    lows = [v for v in (first.low, second.low) if v is not None]
    highs = [v for v in (first.high, second.high) if v is not None]
    return Interval(min(lows) if lows else None, max(highs) if highs else None)


def _clean(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _figure(
    value: float | None, interval: Interval | Figure | None, n: int, hits: int | None = None
) -> Figure:
    """A figure whose interval, where there is one, always holds its value: a percentile
    interval of a skewed statistic can miss the point it is built around."""
    value = _clean(value)
    low = _clean(interval.low) if interval is not None else None
    high = _clean(interval.high) if interval is not None else None
    if value is None:
        return Figure(None, None, None, n, hits)
    if low is not None and high is not None:
        low, high = min(low, value), max(high, value)
    return Figure(value, low, high, n, hits)
