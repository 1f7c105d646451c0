"""How far reviewers and raters agree: κ, α, confusion, evidence overlap, matcher uptake.

Plain Python over dataclasses for the agreement dashboard and the adjudication queue. Each
statistic is computed once, from the counts a database can GROUP BY (unit profiles, pair
tables, confusion cells), which is what the dashboard reads. The forms that take individual
ratings count them first (`count_ratings`) and call the counts form.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from itertools import combinations
from typing import TYPE_CHECKING, Literal

# numpy and krippendorff are imported by the functions that use them: loading them cost
# every process that starts the app (an import command, a job) about a quarter second.
if TYPE_CHECKING:
    import numpy as np

from audit.judgments import CONTRADICTED, JUDGMENTS, SEVERITIES, SUPPORTED, WRONG_CITATION

# The binary collapse published work reports: only a fully supported claim counts as supported.
BINARY_NOT = "not"
BINARY_LABELS: tuple[str, str] = (SUPPORTED, BINARY_NOT)

# Labels are listed in the review page's keyboard order, so every table reads the same way;
# codes from outside the app (imported raters) follow, alphabetically.
_LABEL_ORDER: dict[str, int] = {code: i for i, (code, _) in enumerate(JUDGMENTS)}
_LABEL_ORDER[BINARY_NOT] = len(_LABEL_ORDER)

type _Table = dict[Hashable, dict[str, str]]
# A unit's judgments, sorted: everything nominal statistics need to know about one item.
type Profile = tuple[str, ...]
# (judgment of the row rater, judgment of the column rater) → number of items.
type Cells = Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class Rating:
    """One rater's judgment of one item (a claim id)."""

    item: Hashable
    rater: str
    judgment: str


@dataclass(frozen=True)
class PairKappa:
    rater_a: str
    rater_b: str
    n_items: int
    # None when κ is undefined: both raters gave one and the same judgment to every shared
    # item, so chance agreement is 1 and κ is 0/0.
    kappa: float | None
    percent: float


@dataclass(frozen=True)
class AgreementSummary:
    """Everything the dashboard shows about one set of judgments, computed in one pass."""

    n_items: int  # items with at least two ratings; the only ones that say anything
    n_raters: int
    percent: float | None
    alpha: float | None
    pairs: tuple[PairKappa, ...]


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of row-rater × column-rater judgments, with the items behind every cell."""

    rows: str
    cols: str
    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    # Empty when built from counts: the caller looks the items of a cell up itself.
    items: Mapping[tuple[str, str], tuple[Hashable, ...]] = field(default_factory=dict)
    # Items left out because a judgment was not among `labels`.
    unlisted: int = 0

    @property
    def n(self) -> int:
        return sum(map(sum, self.counts))

    def cell(self, row_label: str, col_label: str) -> tuple[Hashable, ...]:
        return self.items.get((row_label, col_label), ())


@dataclass(frozen=True)
class LabelScore:
    # None where sklearn would divide by zero: a label never predicted has no precision,
    # a label absent from gold has no recall.
    precision: float | None
    recall: float | None
    support: int


@dataclass(frozen=True)
class RaterReport:
    """An automatic (or imported) rater against adjudicated gold, on items both labelled."""

    n: int
    accuracy: float | None
    kappa: float | None
    per_label: Mapping[str, LabelScore]
    confusion: ConfusionMatrix
    # The items where the rater differs from gold; empty when built from counts.
    disagreements: tuple[Hashable, ...]
    differing: int


@dataclass(frozen=True)
class MatcherAcceptance:
    """How reviewers' evidence relates to the matcher's highlights, summed over sheets.

    Automation bias shows as `acceptance` near 1 with `novel_share` near 0: reviewers keep
    what was pre-highlighted and look no further.
    """

    sheets: int
    highlighted: int  # highlighted sentences shown, counted once per sheet
    kept: int  # of those, chosen as evidence
    chosen: int  # evidence sentences chosen
    novel: int  # of those, not highlighted
    acceptance: float | None
    novel_share: float | None


# Adjudication queue order, lower is more severe: the kinds of disagreement among
# audit.judgments.SEVERITIES (the last, CONFIRM, is agreement).
Severity = IntEnum(
    "Severity", [(name, value) for name, value, _ in SEVERITIES if name != "CONFIRM"]
)


@dataclass(frozen=True)
class Disagreement:
    severity: Severity
    evidence_jaccard: float


# --- Ratings in ---------------------------------------------------------------------------


def collapse_binary(judgment: str) -> str:
    """`supported` stays; every other judgment, partial support included, becomes `not`."""
    return SUPPORTED if judgment == SUPPORTED else BINARY_NOT


def _table(ratings: Iterable[Rating]) -> _Table:
    """item → {rater: judgment}.

    A blank judgment is no judgment (an unmapped imported label) and is skipped. If a rater
    rated an item twice the last rating wins, as a later save replaces an earlier one.
    """
    table: _Table = {}
    for rating in ratings:
        if not rating.judgment:
            continue
        table.setdefault(rating.item, {})[rating.rater] = rating.judgment
    return table


def _ordered(labels: Iterable[str]) -> tuple[str, ...]:
    return tuple(
        sorted(set(labels), key=lambda label: (_LABEL_ORDER.get(label, len(_LABEL_ORDER)), label))
    )


def _share(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """κ of two aligned arrays of label indices; None when undefined (one shared label)."""
    import numpy as np

    # Imported here: scikit-learn costs ~100 MB per web worker that never shows statistics.
    from sklearn.metrics import cohen_kappa_score

    present = np.union1d(a, b)
    if len(a) == 0 or len(present) < 2:
        return None
    return _finite(cohen_kappa_score(a, b, labels=present))


def count_ratings(
    ratings: Iterable[Rating],
) -> tuple[dict[Profile, int], dict[tuple[str, str], dict[tuple[str, str], int]]]:
    """The counts the statistics are computed from, on `_table`'s rules: how many items share
    each unit profile, and for every pair of raters (in name order) how many shared items
    fall in each (judgment of the first, judgment of the second) cell.

    The dashboard reads the same counts from the database; every statistic on ratings counts
    them first, so there is one implementation of each.
    """
    profiles: Counter[Profile] = Counter()
    pairs: dict[tuple[str, str], Counter[tuple[str, str]]] = defaultdict(Counter)
    for row in _table(ratings).values():
        profiles[unit_profile(row.values())] += 1
        for a, b in combinations(sorted(row), 2):
            pairs[a, b][row[a], row[b]] += 1
    return dict(profiles), {pair: dict(cells) for pair, cells in pairs.items()}


def percent_agreement(ratings: Iterable[Rating], *, binary: bool = False) -> float | None:
    """Share of agreeing rater pairs per item, averaged over items rated at least twice.

    With two raters per item this is the share of items with equal judgments. None when no
    item has two ratings.
    """
    return summarize(ratings, binary=binary).percent


def cohen_kappa_pairs(ratings: Iterable[Rating], *, binary: bool = False) -> list[PairKappa]:
    """Cohen's κ for every pair of raters that share at least one item, names in order.

    κ is None (not NaN) when undefined: every shared item got one and the same judgment
    from both raters.
    """
    return list(summarize(ratings, binary=binary).pairs)


def krippendorff_alpha(
    ratings: Iterable[Rating],
    level: Literal["nominal", "ordinal"] = "nominal",
    *,
    order: Sequence[str] | None = None,
    binary: bool = False,
) -> float | None:
    """Krippendorff's α over all raters, missing ratings allowed.

    None when undefined: no item rated twice, or one value across all rated pairs. Ordinal α
    needs `order` (least to most, e.g. contradicted … supported); judgments not in it, such
    as unclear, are left out.
    """
    if level == "ordinal":
        if order is None:
            raise ValueError("Ordinal α needs the order of the judgments on the scale.")
    elif level != "nominal":
        raise ValueError(f"Judgments are categories; α at level {level!r} has no meaning.")
    profiles, _ = count_ratings(ratings)
    return alpha_counts(profiles, order=order if level == "ordinal" else None, binary=binary)


def summarize(ratings: Iterable[Rating], *, binary: bool = False) -> AgreementSummary:
    """Percent agreement, nominal α and pairwise κ: the ratings counted, then `summarize_counts`."""
    profiles, pairs = count_ratings(ratings)
    return summarize_counts(profiles, pairs, binary=binary)


# --- Confusion matrices -------------------------------------------------------------------


def _confusion(
    triples: Iterable[tuple[Hashable, str, str]],
    labels: Sequence[str] | None,
    *,
    rows: str,
    cols: str,
    binary: bool,
) -> ConfusionMatrix:
    """`confusion_counts` over the counted triples, with the items of each cell kept."""
    triples = list(triples)
    matrix = confusion_counts(
        Counter((a, b) for _, a, b in triples), labels, rows=rows, cols=cols, binary=binary
    )
    listed = set(matrix.labels)
    items: dict[tuple[str, str], list[Hashable]] = defaultdict(list)
    for item, a, b in triples:
        if binary:
            a, b = collapse_binary(a), collapse_binary(b)
        if a in listed and b in listed:
            items[a, b].append(item)
    return replace(matrix, items={cell: tuple(found) for cell, found in items.items()})


def confusion(
    ratings: Iterable[Rating],
    rater_a: str,
    rater_b: str,
    labels: Sequence[str] | None = None,
    *,
    binary: bool = False,
) -> ConfusionMatrix:
    """Rows are `rater_a`'s judgments, columns `rater_b`'s, over the items both rated.

    `labels` defaults to the judgments present, in keyboard order.
    """
    table = _table(ratings)
    triples = (
        (item, row[rater_a], row[rater_b])
        for item, row in table.items()
        if rater_a in row and rater_b in row
    )
    return _confusion(triples, labels, rows=rater_a, cols=rater_b, binary=binary)


def sheet_confusion(
    ratings: Iterable[Rating],
    labels: Sequence[str] | None = None,
    *,
    order: Mapping[Hashable, tuple[str, str]] | None = None,
    binary: bool = False,
) -> ConfusionMatrix:
    """First sheet × second sheet, when the two reviewers differ from claim to claim.

    `order` names (first, second) for an item; any other item rated by exactly two raters
    takes them in name order, so the same data always draws the same matrix. Items with more
    than two raters and no `order` entry are left out: which two to compare is not ours to
    guess.
    """
    order = order or {}
    table = _table(ratings)
    triples = []
    for item, row in table.items():
        if item in order:
            first, second = order[item]
            if first not in row or second not in row:
                continue
        elif len(row) == 2:
            first, second = sorted(row)
        else:
            continue
        triples.append((item, row[first], row[second]))
    return _confusion(triples, labels, rows="first", cols="second", binary=binary)


# --- Evidence and the matcher -------------------------------------------------------------


def evidence_jaccard(a: frozenset[Hashable], b: frozenset[Hashable]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets agree completely (both found nothing to cite)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def token_f1(a: frozenset[Hashable], b: frozenset[Hashable]) -> float:
    """F1 of one token set against the other (symmetric: 2|a ∩ b| / (|a| + |b|)); two empty
    sets agree completely (neither reviewer marked anything)."""
    total = len(a) + len(b)
    return 2 * len(a & b) / total if total else 1.0


def unit_token_f1(sets: Sequence[frozenset[Hashable]]) -> float | None:
    """Mean pairwise token F1 of one item's token sets; None with fewer than two sets."""
    if len(sets) < 2:
        return None
    return statistics.fmean(token_f1(a, b) for a, b in combinations(sets, 2))


def mean_evidence_jaccard(
    evidence: Mapping[tuple[Hashable, str], frozenset[Hashable]],
) -> float | None:
    """Pairwise Jaccard of evidence sets per item, averaged over items with two or more sets.

    `evidence` maps (item, rater) to the sentence keys that rater chose.
    """
    by_item: dict[Hashable, list[frozenset[Hashable]]] = defaultdict(list)
    for (item, _rater), sentences in evidence.items():
        by_item[item].append(sentences)
    scores = [unit_evidence_jaccard(sets) for sets in by_item.values() if len(sets) >= 2]
    return statistics.fmean(scores) if scores else None


def matcher_acceptance(
    evidence: Mapping[tuple[Hashable, str], frozenset[Hashable]],
    highlights: Mapping[Hashable, frozenset[Hashable]],
) -> MatcherAcceptance:
    """Reviewers' evidence against the matcher's pre-highlighted sentences.

    Sheets on items missing from `highlights` were never shown any and are left out; an
    item present with an empty set was shown nothing, so all its evidence is novel.
    """
    counts = [
        sheet_matcher_counts(sentences, highlights[item])
        for (item, _rater), sentences in evidence.items()
        if item in highlights
    ]
    totals = [sum(column) for column in zip(*counts, strict=True)] or [0, 0, 0, 0]
    highlighted, kept, chosen, novel = totals
    return matcher_acceptance_sums(
        sheets=len(counts), highlighted=highlighted, kept=kept, chosen=chosen, novel=novel
    )


def sheet_matcher_counts(
    evidence: frozenset[Hashable], shown: frozenset[Hashable]
) -> tuple[int, int, int, int]:
    """One sheet's (highlighted, kept, chosen, novel), as `matcher_acceptance` sums them."""
    return len(shown), len(evidence & shown), len(evidence), len(evidence - shown)


def matcher_acceptance_sums(
    *, sheets: int, highlighted: int, kept: int, chosen: int, novel: int
) -> MatcherAcceptance:
    """`matcher_acceptance` from its sums over sheets, as a database adds them up."""
    return MatcherAcceptance(
        sheets=sheets,
        highlighted=highlighted,
        kept=kept,
        chosen=chosen,
        novel=novel,
        acceptance=_share(kept, highlighted),
        novel_share=_share(novel, chosen),
    )


def unit_evidence_jaccard(sets: Sequence[frozenset[Hashable]]) -> float | None:
    """Mean pairwise Jaccard of one item's evidence sets; None with fewer than two sets."""
    if len(sets) < 2:
        return None
    if len(sets) == 2:
        return evidence_jaccard(*sets)
    return statistics.fmean(evidence_jaccard(a, b) for a, b in combinations(sets, 2))


# --- Per-claim facts, stored so the dashboard only counts -----------------------------------

PROFILE_SEPARATOR = "|"


@dataclass(frozen=True)
class CountedSheet:
    """A sheet the dashboard counts, reduced to what agreement needs."""

    order: int  # sheets are lettered A, B, … in this order
    rater: Hashable
    judgment: str
    evidence: frozenset[Hashable]  # sentence spans, for Jaccard
    # Word tokens (audit.judgments.evidence_tokens, assertion_tokens), for token F1.
    evidence_tokens: frozenset[Hashable] = frozenset()
    assertion_tokens: frozenset[Hashable] = frozenset()


@dataclass(frozen=True)
class PairFacts:
    rater_a: Hashable
    rater_b: Hashable
    judgment_a: str
    judgment_b: str
    evidence_jaccard: float
    evidence_f1: float = 1.0
    unsupported_f1: float = 1.0


@dataclass(frozen=True)
class ClaimFacts:
    profile: str
    evidence_jaccard: float | None
    judgment_a: str
    judgment_b: str
    pairs: tuple[PairFacts, ...]
    evidence_f1: float | None = None
    unsupported_f1: float | None = None


def profile_key(judgments: Iterable[str]) -> str:
    """A unit profile as stored text; judgment codes never contain the separator."""
    return PROFILE_SEPARATOR.join(unit_profile(judgments))


def profile_from_key(key: str) -> Profile:
    return tuple(key.split(PROFILE_SEPARATOR)) if key else ()


def claim_facts(sheets: Sequence[CountedSheet]) -> ClaimFacts:
    """Everything the dashboard needs of one claim's counted sheets (one rater each)."""
    ordered = sorted(sheets, key=lambda sheet: sheet.order)
    pairs = tuple(
        PairFacts(
            rater_a=a.rater,
            rater_b=b.rater,
            judgment_a=a.judgment,
            judgment_b=b.judgment,
            evidence_jaccard=evidence_jaccard(a.evidence, b.evidence),
            evidence_f1=token_f1(a.evidence_tokens, b.evidence_tokens),
            unsupported_f1=token_f1(a.assertion_tokens, b.assertion_tokens),
        )
        for a, b in combinations(ordered, 2)
    )
    return ClaimFacts(
        profile=profile_key(sheet.judgment for sheet in ordered),
        evidence_jaccard=unit_evidence_jaccard([sheet.evidence for sheet in ordered]),
        judgment_a=ordered[0].judgment if len(ordered) >= 2 else "",
        judgment_b=ordered[1].judgment if len(ordered) >= 2 else "",
        pairs=pairs,
        evidence_f1=unit_token_f1([sheet.evidence_tokens for sheet in ordered]),
        unsupported_f1=unit_token_f1([sheet.assertion_tokens for sheet in ordered]),
    )


# --- A rater against gold -----------------------------------------------------------------


def rater_vs_gold(
    predictions: Mapping[Hashable, str],
    gold: Mapping[Hashable, str],
    labels: Sequence[str] | None = None,
    *,
    binary: bool = False,
) -> RaterReport:
    """Accuracy, κ, per-judgment precision/recall and confusion (rows gold, columns rater).

    Only items in both mappings, with non-blank judgments, count; `disagreements` lists the
    items where the rater differs, in gold order.
    """
    items = [item for item, judgment in gold.items() if judgment and predictions.get(item)]
    report = rater_vs_gold_counts(
        Counter((gold[item], predictions[item]) for item in items), labels, binary=binary
    )
    shown = collapse_binary if binary else str
    disagreements = tuple(item for item in items if shown(gold[item]) != shown(predictions[item]))
    return replace(report, disagreements=disagreements)


def _codes(matrix: ConfusionMatrix, judgments: Iterable[str]) -> dict[str, int]:
    # Integer codes, as sklearn is several times slower on strings; judgments outside
    # `labels` get codes past them, so they still count against accuracy and κ.
    codes = {label: i for i, label in enumerate(matrix.labels)}
    for label in _ordered(judgments):
        codes.setdefault(label, len(codes))
    return codes


def _rater_report(
    matrix: ConfusionMatrix,
    true: np.ndarray,
    pred: np.ndarray,
    *,
    disagreements: tuple[Hashable, ...] = (),
) -> RaterReport:
    """The scores of one rater against gold, from their coded judgments item by item."""
    import numpy as np

    n = len(true)
    per_label: dict[str, LabelScore] = {}
    if n and matrix.labels:
        from sklearn.metrics import precision_recall_fscore_support

        precision, recall, _f1, support = precision_recall_fscore_support(
            true, pred, labels=np.arange(len(matrix.labels)), zero_division=np.nan
        )
        for label, p, r, s in zip(matrix.labels, precision, recall, support, strict=True):
            per_label[label] = LabelScore(precision=_finite(p), recall=_finite(r), support=int(s))
    differing = int(np.count_nonzero(true != pred))
    return RaterReport(
        n=n,
        accuracy=_share(n - differing, n),
        kappa=_kappa(true, pred),
        per_label=per_label,
        confusion=matrix,
        disagreements=disagreements,
        differing=differing,
    )


# --- The same statistics from counts -------------------------------------------------------


def unit_profile(judgments: Iterable[str]) -> Profile:
    """A unit's non-blank judgments, sorted: units with equal profiles count the same."""
    return tuple(sorted(j for j in judgments if j))


def _collapsed_profiles(profiles: Mapping[Profile, int], binary: bool) -> dict[Profile, int]:
    """Profiles of two or more judgments (the only ones with a pair), collapsed if `binary`."""
    kept: dict[Profile, int] = defaultdict(int)
    for profile, n in profiles.items():
        judgments = [j for j in profile if j]
        if n <= 0 or len(judgments) < 2:
            continue
        if binary:
            judgments = [collapse_binary(j) for j in judgments]
        kept[unit_profile(judgments)] += n
    return dict(kept)


def _collapsed_cells(cells: Cells, binary: bool) -> dict[tuple[str, str], int]:
    kept: dict[tuple[str, str], int] = defaultdict(int)
    for (a, b), n in cells.items():
        if n <= 0 or not a or not b:
            continue
        if binary:
            a, b = collapse_binary(a), collapse_binary(b)
        kept[a, b] += n
    return dict(kept)


def _percent_of_profiles(profiles: Mapping[Profile, int]) -> float | None:
    units = sum(profiles.values())
    if not units:
        return None
    shares = []
    for profile, n in profiles.items():
        m = len(profile)
        agreeing = sum(k * (k - 1) for k in Counter(profile).values())
        shares.append(n * agreeing / (m * (m - 1)))
    return math.fsum(shares) / units


def _alpha_of_profiles(
    profiles: Mapping[Profile, int], order: Sequence[str] | None = None
) -> float | None:
    """Nominal α, or ordinal α along `order` (least to most) when it is given."""
    import krippendorff
    import numpy as np

    present = {j for profile in profiles for j in profile}
    if order is None:
        labels = _ordered(present)
    else:
        labels = tuple(label for label in order if label in present)
    if len(labels) < 2:
        return None
    index = {label: i for i, label in enumerate(labels)}
    rows = np.zeros((len(profiles), len(labels)), dtype=np.int64)
    for row, profile in enumerate(profiles):
        for judgment in profile:
            rows[row, index[judgment]] += 1
    # One row per unit, as the package counts units; equal units are repeated, not weighted.
    value_counts = np.repeat(rows, list(profiles.values()), axis=0)
    level = "nominal" if order is None else "ordinal"
    return _finite(krippendorff.alpha(value_counts=value_counts, level_of_measurement=level))


def alpha_counts(
    profiles: Mapping[Profile, int],
    *,
    order: Sequence[str] | None = None,
    binary: bool = False,
) -> float | None:
    """Krippendorff's α from unit profiles; ordinal along `order`, whose judgments alone
    count (units left with fewer than two of them drop out)."""
    if order is None:
        return _alpha_of_profiles(_collapsed_profiles(profiles, binary))
    on_scale: dict[Profile, int] = defaultdict(int)
    scale = set(order)
    for profile, n in _collapsed_profiles(profiles, binary).items():
        kept = tuple(j for j in profile if j in scale)
        if len(kept) >= 2:
            on_scale[kept] += n
    return _alpha_of_profiles(on_scale, order)


def _pair_kappa(rater_a: str, rater_b: str, cells: Mapping[tuple[str, str], int]) -> PairKappa:
    import numpy as np

    labels = _ordered(j for pair in cells for j in pair)
    index = {label: i for i, label in enumerate(labels)}
    counts = list(cells.values())
    ya = np.repeat([index[a] for a, _ in cells], counts)
    yb = np.repeat([index[b] for _, b in cells], counts)
    n_items = sum(counts)
    return PairKappa(
        rater_a=rater_a,
        rater_b=rater_b,
        n_items=n_items,
        kappa=_kappa(ya, yb),
        percent=sum(n for (a, b), n in cells.items() if a == b) / n_items,
    )


def summarize_counts(
    profiles: Mapping[Profile, int],
    pairs: Mapping[tuple[str, str], Cells],
    *,
    binary: bool = False,
) -> AgreementSummary:
    """`summarize` from counts: how many units share each profile, and for every pair of
    raters how many shared items fall in each (judgment of the first, of the second) cell.

    The two must describe the same ratings; pairs may name their raters in either order.
    """
    kept = _collapsed_profiles(profiles, binary)
    tables: dict[tuple[str, str], dict[tuple[str, str], int]] = defaultdict(dict)
    for (rater_a, rater_b), cells in pairs.items():
        flip = rater_b < rater_a
        table = tables[(rater_b, rater_a) if flip else (rater_a, rater_b)]
        for (a, b), n in _collapsed_cells(cells, binary).items():
            cell = (b, a) if flip else (a, b)
            table[cell] = table.get(cell, 0) + n
    scored = tuple(
        _pair_kappa(rater_a, rater_b, cells)
        for (rater_a, rater_b), cells in sorted(tables.items())
        if sum(cells.values())
    )
    return AgreementSummary(
        n_items=sum(kept.values()),
        n_raters=len({rater for pair in scored for rater in (pair.rater_a, pair.rater_b)}),
        percent=_percent_of_profiles(kept),
        alpha=_alpha_of_profiles(kept),
        pairs=scored,
    )


def confusion_counts(
    cells: Cells,
    labels: Sequence[str] | None = None,
    *,
    rows: str,
    cols: str,
    binary: bool = False,
) -> ConfusionMatrix:
    """A confusion matrix from its cell counts; `items` stays empty."""
    counted = _collapsed_cells(cells, binary)
    if labels is None:
        labels = _ordered(j for cell, n in counted.items() if n for j in cell)
    labels = tuple(labels)
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    unlisted = 0
    for (a, b), n in counted.items():
        if a not in index or b not in index:
            unlisted += n
            continue
        counts[index[a]][index[b]] += n
    return ConfusionMatrix(
        rows=rows, cols=cols, labels=labels, counts=tuple(map(tuple, counts)), unlisted=unlisted
    )


def rater_vs_gold_counts(
    cells: Cells, labels: Sequence[str] | None = None, *, binary: bool = False
) -> RaterReport:
    """`rater_vs_gold` from the counts of (gold judgment, rater judgment) over shared items.

    `disagreements` stays empty; `differing` counts them.
    """
    import numpy as np

    counted = _collapsed_cells(cells, binary)
    matrix = confusion_counts(counted, labels, rows="gold", cols="rater")
    codes = _codes(matrix, (j for cell in counted for j in cell))
    weights = list(counted.values())
    true = np.repeat([codes[t] for t, _ in counted], weights).astype(np.intp)
    pred = np.repeat([codes[p] for _, p in counted], weights).astype(np.intp)
    return _rater_report(matrix, true, pred)


# --- Two sheets on one claim --------------------------------------------------------------


def _same_passage(
    judgment: str, a_wrong_passage: Hashable | None, b_wrong_passage: Hashable | None
) -> bool:
    # The passage is only asked for with a wrong-citation judgment; one left over on a sheet
    # whose judgment later changed is not a disagreement.
    return judgment != WRONG_CITATION or a_wrong_passage == b_wrong_passage


def disagreement(
    a_judgment: str,
    b_judgment: str,
    *,
    a_wrong_passage: Hashable | None = None,
    b_wrong_passage: Hashable | None = None,
    a_evidence: frozenset[Hashable] = frozenset(),
    b_evidence: frozenset[Hashable] = frozenset(),
    jaccard_threshold: float = 1.0,
    a_assertions: frozenset[Hashable] = frozenset(),
    b_assertions: frozenset[Hashable] = frozenset(),
) -> Disagreement | None:
    """Why two submitted sheets need a lead, most severe reason first; None if they agree.

    Evidence alone counts when its Jaccard falls below `jaccard_threshold`; the default 1.0
    makes any difference count, lower values let the lead ignore small ones. Unsupported
    assertions (audit.judgments.assertion_keys) count when they differ at all: gold carries
    them, and a threshold would let one reviewer's spans into it unseen.
    """
    jaccard = evidence_jaccard(a_evidence, b_evidence)
    if a_judgment != b_judgment:
        if {a_judgment, b_judgment} == {CONTRADICTED, SUPPORTED}:
            return Disagreement(Severity.CONTRADICTED_VS_SUPPORTED, jaccard)
        return Disagreement(Severity.JUDGMENT, jaccard)
    if not _same_passage(a_judgment, a_wrong_passage, b_wrong_passage):
        return Disagreement(Severity.WRONG_PASSAGE, jaccard)
    if jaccard < jaccard_threshold:
        return Disagreement(Severity.EVIDENCE, jaccard)
    if a_assertions != b_assertions:
        return Disagreement(Severity.ASSERTIONS, jaccard)
    return None


def is_unanimous(
    a_judgment: str,
    b_judgment: str,
    *,
    a_wrong_passage: Hashable | None = None,
    b_wrong_passage: Hashable | None = None,
    a_evidence: frozenset[Hashable] = frozenset(),
    b_evidence: frozenset[Hashable] = frozenset(),
    a_assertions: frozenset[Hashable] = frozenset(),
    b_assertions: frozenset[Hashable] = frozenset(),
) -> bool:
    """Same judgment, same wrong-citation passage, same evidence, same unsupported
    assertions (the same spans, the same free texts ignoring case; notes aside): gold
    without a lead."""
    return (
        a_judgment == b_judgment
        and _same_passage(a_judgment, a_wrong_passage, b_wrong_passage)
        and a_evidence == b_evidence
        and a_assertions == b_assertions
    )
