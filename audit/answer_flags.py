"""Answer-level flags read off the matcher's stored checks of its claims, with no Django:
an answer none of whose citations holds up was likely written without its sources."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from audit.matching import LIKELY_MIN_SCORE

NO_CITATION_VERIFIES = "No citation verifies: answered without sources?"


@dataclass(frozen=True)
class CitationChecks:
    """What is stored about one top-level claim's citations (Claim and its ClaimCheck)."""

    cited: bool  # it has a marker at all, a supplied passage or not (not Claim.is_uncited)
    cited_unknown: bool  # a marker names a passage never supplied (Claim.cited_unknown)
    best_score: float | None  # ClaimCheck.best_score; None when the claim has no check
    ungrounded: bool  # a number of the claim is not in the cited passages (ClaimCheck.numbers)
    wrong_citation: bool  # an uncited passage supports it clearly better

    @classmethod
    def from_stored(
        cls,
        *,
        is_uncited: bool,
        cited_unknown: Sequence[int],
        best_score: float | None,
        numbers: Sequence[dict[str, Any]] | None,
        wrong_citation: dict[str, Any] | None,
    ) -> CitationChecks:
        return cls(
            cited=not is_uncited,
            cited_unknown=bool(cited_unknown),
            best_score=best_score,
            ungrounded=any(not n.get("grounded") for n in numbers or ()),
            wrong_citation=wrong_citation is not None,
        )

    @property
    def fails(self) -> bool:
        """Whether a check of this cited claim failed. Each of these fails it:

        - cited unknown: a marker names a passage that was never supplied ([0], or past the
          last passage);
        - quote not found: no cited sentence, with its better neighbour, holds half of the
          claim's content words (best_score below matching.LIKELY_MIN_SCORE, the "likely"
          threshold);
        - numbers ungrounded: a number of the claim is not in its cited passages;
        - wrong citation: an uncited passage covers the claim clearly better.

        A cited claim without a stored check fails only by citing an unknown passage: the
        other checks were never run, and an unrun check is not a failed one.
        """
        if self.cited_unknown:
            return True
        if self.best_score is None:
            return False
        return self.best_score < LIKELY_MIN_SCORE or self.ungrounded or self.wrong_citation


def no_citation_verifies(claims: Iterable[CitationChecks]) -> bool:
    """Whether every claim of an answer that cites anything fails a check (CitationChecks.fails),
    and at least one claim cites something.

    The claims are the answer's top-level claims, the ones the set page counts; an atomic
    fact split from one is left out. An answer without any citation is not flagged: its
    uncited claims already say so. The quotations inside an answer, which the answer page
    checks against the cited passages as it is shown, are not stored and play no part.
    Computed from machine checks only, so it tells nothing about any reviewer's sheet.
    """
    cited = [claim for claim in claims if claim.cited]
    return bool(cited) and all(claim.fails for claim in cited)
