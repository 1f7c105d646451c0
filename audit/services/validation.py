"""What a judgment needs to be final, on a reviewer's sheet or a lead's gold record: one
set of rules that review and adjudication both apply, and the errors they raise."""

from __future__ import annotations

from collections.abc import Sequence

from audit import judgments
from audit.judgments import EvidenceRef, JudgmentError
from audit.models import Passage

# A review action that cannot be done; the message is meant for the user. The same type as
# a judgment's own refusals (audit.judgments), so one except clause catches both.
ReviewError = JudgmentError


class SheetIncomplete(ReviewError):
    """The sheet cannot be submitted yet; `problems` lists what is missing."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = problems


def named_passage(position: int | None, passages: dict[int, Passage]) -> Passage | None:
    """The answer's passage at `position` (a wrong citation's), refused when there is none."""
    if position is None:
        return None
    passage = passages.get(position)
    if passage is None:
        raise ReviewError(f"The answer has no passage [{position}].")
    return passage


def checked_evidence(items: Sequence[EvidenceRef], passages: dict[int, Passage]) -> list[dict]:
    """Evidence as stored: spans of the answer's passages, text cut by the server."""
    return judgments.checked_evidence(items, {n: p.text for n, p in passages.items()})


def judgment_problems(
    *,
    claim_id: int,
    judgment: str,
    evidence: Sequence[dict],
    wrong_citation_passage: Passage | None,
) -> list[str]:
    """What a judgment still lacks to be final, on a sheet or on a gold record."""
    cited = Passage.objects.filter(citing_claims=claim_id).values_list("position", flat=True)
    return judgments.judgment_problems(
        judgment=judgment,
        evidence=evidence,
        wrong_citation_passage=wrong_citation_passage.position if wrong_citation_passage else None,
        cited=cited if judgment == judgments.WRONG_CITATION else (),
    )
