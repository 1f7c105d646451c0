"""Answer-level flags read off the matcher's stored checks of its claims, with no Django:
an answer none of whose citations holds up was likely written without its sources."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# ClaimCheck.Label's code for a claim whose citations the string checks do not back.
UNKNOWN = "unknown"

NO_CITATION_VERIFIES = "No citation verifies: answered without sources?"


@dataclass(frozen=True)
class CitationChecks:
    """What is stored about one top-level claim's citations (Claim and its ClaimCheck)."""

    cited: bool  # it has a marker at all, a supplied passage or not (not Claim.is_uncited)
    cited_unknown: bool  # a marker names a passage never supplied (Claim.cited_unknown)
    label: str | None  # ClaimCheck.label; None when the claim has no check
    wrong_citation: bool  # ClaimCheck.wrong_citation is set

    @property
    def fails(self) -> bool:
        """Whether a check of this cited claim failed. Each of these fails it:

        - cited unknown: a marker names a passage that was never supplied ([0], or past the
          last passage);
        - quote not found: no cited sentence, with its better neighbour, holds half of the
          claim's content words (ClaimCheck.best_score below matching.LIKELY_MIN_SCORE);
        - numbers ungrounded: a number of the claim is not in its cited passages;
        - wrong citation: an uncited passage covers the claim clearly better.

        For a claim that cites a supplied passage, matching.trust_label gives the label
        "unknown" exactly when its numbers are ungrounded, or its words are not found, or it
        also cites an unknown passage; the label is stored by the same run as the score and
        numbers, so reading it is exact and needs no JSON. A cited claim without a stored
        check fails only by citing an unknown passage: an unrun check is not a failed one.
        """
        if self.cited_unknown:
            return True
        if self.label is None:
            return False
        return self.label == UNKNOWN or self.wrong_citation


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
