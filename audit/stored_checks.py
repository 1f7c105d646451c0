"""The matcher's checks of an answer's claims in the shape ClaimCheck stores them (plain
values, passages by their 1-based position), with no Django, so imports can run them in
worker processes and every path (import, rematch, claim splitting) stores the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from audit import matching


@dataclass(frozen=True)
class CheckValues:
    """One claim's ClaimCheck fields: highlights, numbers and wrong_citation as JSON values."""

    matcher_version: str
    label: str
    best_score: float
    highlights: list[dict[str, Any]]
    numbers: list[dict[str, Any]]
    wrong_citation: dict[str, Any] | None


class PassageCache:
    """Prepared passages by text, so a passage shared by several answers (one question
    answered by several systems) is split and indexed once per import.

    Small and cleared when full: it is meant for answers to one question next to each
    other in a file. Every prepared passage kept is walked by each full garbage collection,
    and with 2,000 kept that cost 2.5 s of CPU per 10,000 answers that shared none.
    """

    def __init__(self, limit: int = 64) -> None:
        self._limit = limit
        self._prepared: dict[str, matching.PreparedPassage] = {}

    def get(self, text: str) -> matching.PreparedPassage:
        prepared = self._prepared.get(text)
        if prepared is None:
            if len(self._prepared) >= self._limit:
                self._prepared.clear()
            prepared = self._prepared[text] = matching.prepare_passage(text)
        return prepared


def answer_check_values(
    passages: Sequence[str | matching.PreparedPassage],
    claims: Iterable[tuple[str, Sequence[int], bool]],
    cache: PassageCache | None = None,
    positions: Sequence[int] | None = None,
) -> list[CheckValues]:
    """The checks of an answer's claims, given as (text, cited positions, has an unknown
    citation); passages in position order (citation [n] is passages[n - 1]), their
    positions 1, 2, ... unless given.

    Passages are prepared only when the answer has a claim to check.
    """
    if positions is None:
        positions = range(1, len(passages) + 1)
    prepared: list[matching.PreparedPassage] | None = None
    values = []
    for text, citations, has_unknown in claims:
        if prepared is None:
            prepared = [
                p
                if isinstance(p, matching.PreparedPassage)
                else (cache.get(p) if cache else matching.prepare_passage(p))
                for p in passages
            ]
        cited_positions = list(citations)
        uncited_positions = [n for n in positions if n not in cited_positions]
        result = matching.check_claim(
            text,
            [prepared[n - 1] for n in cited_positions],
            [prepared[n - 1] for n in uncited_positions],
            has_unknown_citation=has_unknown,
        )
        values.append(
            CheckValues(
                matcher_version=matching.MATCHER_VERSION,
                label=result.label,
                best_score=result.best_score,
                highlights=[_highlight(h, cited_positions) for h in result.highlights],
                numbers=[{"token": t, "grounded": g} for t, g in result.numbers],
                wrong_citation=(
                    _highlight(result.wrong_citation, uncited_positions)
                    if result.wrong_citation
                    else None
                ),
            )
        )
    return values


def _highlight(highlight: matching.Highlight, positions: Sequence[int]) -> dict[str, Any]:
    return {
        "passage": positions[highlight.passage],
        "start": highlight.start,
        "end": highlight.end,
        "score": round(highlight.score, 4),
    }
