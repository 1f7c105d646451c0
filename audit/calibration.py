"""Reviewers against gold: where a sheet differs from the adjudicated record, each
reviewer's accuracy, κ and evidence overlap with gold over time, guideline diffs and
agreement per guideline version. Plain Python with no Django imports."""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from audit.agreement import LabelScore, Rating, rater_vs_gold
from audit.judgments import JUDGMENTS

# What a reviewer's sheet can differ from gold in, in the order the feedback page names them.
JUDGMENT = "judgment"
EVIDENCE = "evidence"
WRONG_PASSAGE = "wrong-citation passage"


@dataclass(frozen=True)
class Judged:
    """The parts of a judgment that feedback compares: a sheet's or gold's."""

    judgment: str
    evidence: frozenset[tuple[int, int, int]]
    wrong_passage: int | None = None


def gold_differences(sheet: Judged, gold: Judged) -> tuple[str, ...]:
    """What the sheet got otherwise than gold; empty when they agree."""
    found = []
    if sheet.judgment != gold.judgment:
        found.append(JUDGMENT)
    if sheet.evidence != gold.evidence:
        found.append(EVIDENCE)
    if sheet.wrong_passage != gold.wrong_passage:
        found.append(WRONG_PASSAGE)
    return tuple(found)


def evidence_overlap(
    sheet: Iterable[tuple[int, int, int]], gold: Iterable[tuple[int, int, int]]
) -> float | None:
    """Jaccard of two evidence span sets; None when both are empty (nothing to compare)."""
    a, b = frozenset(sheet), frozenset(gold)
    if not a and not b:
        return None
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "same", "added", "removed" or "gap" (unchanged lines left out)
    text: str
    old: int | None  # 1-based line numbers, None where the line is not on that side
    new: int | None


def guideline_diff(before: str, after: str, *, context: int = 2) -> list[DiffLine]:
    """What changed between two guideline texts, line by line (difflib), with `context`
    unchanged lines around each change and a gap line for the rest."""
    old, new = before.splitlines(), after.splitlines()
    lines: list[DiffLine] = []
    for group in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(context):
        if lines:
            lines.append(DiffLine("gap", "…", None, None))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i2 - i1):
                    lines.append(DiffLine("same", old[i1 + k], i1 + k + 1, j1 + k + 1))
                continue
            for k in range(i1, i2):
                lines.append(DiffLine("removed", old[k], k + 1, None))
            for k in range(j1, j2):
                lines.append(DiffLine("added", new[k], None, k + 1))
    return lines


@dataclass(frozen=True)
class VersionedSheet:
    claim: Hashable
    reviewer: str
    judgment: str
    version: int | None  # the guideline version the sheet was submitted under


def ratings_by_version(sheets: Iterable[VersionedSheet]) -> dict[int | None, list[Rating]]:
    """Each claim's ratings under the one guideline version all its sheets share; a claim
    whose sheets were judged under different versions (or an unrecorded one) goes under
    None, as it says nothing about either version alone."""
    by_claim: dict[Hashable, list[VersionedSheet]] = {}
    for sheet in sheets:
        by_claim.setdefault(sheet.claim, []).append(sheet)
    grouped: dict[int | None, list[Rating]] = {}
    for claim, claim_sheets in by_claim.items():
        versions = {s.version for s in claim_sheets}
        version = versions.pop() if len(versions) == 1 else None
        grouped.setdefault(version, []).extend(
            Rating(item=claim, rater=s.reviewer, judgment=s.judgment) for s in claim_sheets
        )
    return grouped


# ------------------------------------------------------------------ reviewers against gold

# Below this many sheets a reviewer's accuracy says too little to alert on.
MIN_SHEETS = 5


@dataclass(frozen=True)
class GoldPair:
    """One submitted sheet of a reviewer beside the claim's gold."""

    claim: Hashable
    sheet: Judged
    gold: Judged
    control: bool  # judged as a control claim
    day: date  # the day the sheet was submitted


@dataclass(frozen=True)
class ReviewerScore:
    n: int
    accuracy: float | None
    kappa: float | None
    per_label: Mapping[str, LabelScore]
    evidence_overlap: float | None  # mean Jaccard with gold's evidence, where either has any


@dataclass(frozen=True)
class WeekPoint:
    week: date  # the Monday of the week
    n: int
    accuracy: float


@dataclass(frozen=True)
class ReviewerCalibration:
    controls: ReviewerScore
    adjudicated: ReviewerScore  # every adjudicated claim the reviewer judged, controls too
    weeks: tuple[WeekPoint, ...]

    def measured(self) -> ReviewerScore:
        """Controls when there are enough of them, else every adjudicated claim."""
        return self.controls if self.controls.n >= MIN_SHEETS else self.adjudicated

    def below(self, threshold: float) -> bool:
        score = self.measured()
        return score.n >= MIN_SHEETS and score.accuracy is not None and score.accuracy < threshold


def reviewer_score(pairs: Sequence[GoldPair]) -> ReviewerScore:
    """Accuracy, κ and per-judgment precision/recall of the sheets against gold (the
    pure core's rater_vs_gold), and the mean evidence overlap with gold."""
    report = rater_vs_gold(
        {i: p.sheet.judgment for i, p in enumerate(pairs)},
        {i: p.gold.judgment for i, p in enumerate(pairs)},
        [code for code, _ in JUDGMENTS],
    )
    overlaps = [
        o
        for o in (evidence_overlap(p.sheet.evidence, p.gold.evidence) for p in pairs)
        if o is not None
    ]
    return ReviewerScore(
        n=report.n,
        accuracy=report.accuracy,
        kappa=report.kappa,
        per_label=report.per_label,
        evidence_overlap=sum(overlaps) / len(overlaps) if overlaps else None,
    )


def reviewer_calibration(pairs: Iterable[GoldPair]) -> ReviewerCalibration:
    pairs = list(pairs)
    weeks: dict[date, list[bool]] = {}
    for p in pairs:
        monday = p.day - timedelta(days=p.day.weekday())
        weeks.setdefault(monday, []).append(p.sheet.judgment == p.gold.judgment)
    return ReviewerCalibration(
        controls=reviewer_score([p for p in pairs if p.control]),
        adjudicated=reviewer_score(pairs),
        weeks=tuple(
            WeekPoint(week, len(hits), sum(hits) / len(hits))
            for week, hits in sorted(weeks.items())
        ),
    )


@dataclass(frozen=True)
class Chart:
    """A small line chart of weekly accuracy, as SVG coordinates (no script needed)."""

    width: int
    height: int
    points: str  # the polyline's "x,y x,y ..."
    dots: tuple[tuple[float, float, str], ...]  # x, y and a title per week
    threshold_y: float


def accuracy_chart(
    weeks: Sequence[WeekPoint], threshold: float, *, width: int = 160, height: int = 40
) -> Chart:
    pad = 4

    def y(share: float) -> float:
        return round(pad + (1 - share) * (height - 2 * pad), 1)

    step = (width - 2 * pad) / max(len(weeks) - 1, 1)
    dots = tuple(
        (
            round(pad + i * step, 1),
            y(w.accuracy),
            f"week of {w.week.isoformat()}: {round(100 * w.accuracy)}% of {w.n}",
        )
        for i, w in enumerate(weeks)
    )
    return Chart(
        width=width,
        height=height,
        points=" ".join(f"{x},{yy}" for x, yy, _ in dots),
        dots=dots,
        threshold_y=y(threshold),
    )
