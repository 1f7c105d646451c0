"""Reviewers against gold: where a sheet differs from the adjudicated record. Plain Python
with no Django imports, so the feedback page and the calibration metrics share one rule."""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from audit.agreement import Rating

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
