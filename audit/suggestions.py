"""Suggestions in plain Python: what a source proposes for one claim, how a source is named
in a set's settings, and which claims a set withholds suggestions from.

A source is the built-in matcher, an in-app judge run, or a model outside the app that
pushed its suggestions (audit.models.SuggestionSource); the selectors read each into the
same `Suggested` shape, so the review page, the exports and the measurement against gold
treat them alike."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

MATCHER = "matcher"
JUDGE_RUN = "judge-run"
SOURCE = "source"


@dataclass(frozen=True)
class SourceKey:
    """A source as a set's settings and the API name it: "matcher", "judge-run:<id>" or
    "source:<id>"."""

    kind: str
    pk: int | None = None

    def __str__(self) -> str:
        return self.kind if self.pk is None else f"{self.kind}:{self.pk}"

    @classmethod
    def parse(cls, text: str) -> SourceKey | None:
        """The key `text` spells, or None for anything else."""
        text = (text or "").strip()
        if text == MATCHER:
            return cls(MATCHER)
        kind, sep, pk = text.partition(":")
        if sep and kind in (JUDGE_RUN, SOURCE) and pk.isascii() and pk.isdigit():
            number = int(pk)
            if 0 < number < 2**63:
                return cls(kind, number)
        return None


@dataclass(frozen=True)
class SuggestedSpan:
    """Evidence (a span of passage `passage`, by position) or, with `passage` None, words of
    the claim; `score` in [0, 1] where the source gave one."""

    start: int
    end: int
    passage: int | None = None
    score: float | None = None
    text: str = ""


@dataclass(frozen=True)
class Suggested:
    """One source's proposal for one claim. Evidence is best first."""

    claim_id: int
    judgment: str = ""
    judgment_score: float | None = None
    evidence: tuple[SuggestedSpan, ...] = ()
    unsupported: tuple[SuggestedSpan, ...] = ()
    wrong_citation_passage: int | None = None
    wrong_citation_score: float | None = None
    extra: dict = field(default_factory=dict, compare=False)


def withheld(seed: str, share: float, claim_id: int) -> bool:
    """Whether a set withholds suggestions from a claim: a draw from the set's recorded seed
    and the claim alone, so every reviewer of a claim sees it the same way (agreement is
    compared between claims) and the draw can be replayed from what was recorded."""
    if not seed or share <= 0:
        return False
    digest = hashlib.sha256(f"{seed}:{claim_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share
