"""The matcher's machine checks on stored claims: built for an answer's claims (import,
claim splitting) and recomputed for a whole set after the matcher changed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from django.db import transaction

from audit import matching
from audit.models import Answer, AuditSet, Claim, ClaimCheck, Passage
from audit.services.derived import claims_changed
from audit.services.locks import claims_lock


def answer_claim_checks(
    passages: list[Passage], claims: Iterable[tuple[Claim, Sequence[int], bool]]
) -> list[ClaimCheck]:
    """Unsaved ClaimChecks for an answer's claims, each passage prepared once.

    Shared by import, rematch and claim splitting, so every path stores the same checks.
    """
    prepared = [matching.prepare_passage(p.text) for p in passages]
    checks = []
    for claim, citations, has_unknown in claims:
        cited_positions = list(citations)
        uncited_positions = [p.position for p in passages if p.position not in citations]
        result = matching.check_claim(
            claim.text,
            [prepared[n - 1] for n in cited_positions],
            [prepared[n - 1] for n in uncited_positions],
            has_unknown_citation=has_unknown,
        )
        checks.append(
            ClaimCheck(
                claim=claim,
                matcher_version=matching.MATCHER_VERSION,
                label=result.label,
                best_score=result.best_score,
                highlights=[_highlight_json(h, cited_positions) for h in result.highlights],
                numbers=[{"token": t, "grounded": g} for t, g in result.numbers],
                wrong_citation=(
                    _highlight_json(result.wrong_citation, uncited_positions)
                    if result.wrong_citation
                    else None
                ),
            )
        )
    return checks


def _highlight_json(highlight: matching.Highlight, positions: Sequence[int]) -> dict:
    return {
        "passage": positions[highlight.passage],
        "start": highlight.start,
        "end": highlight.end,
        "score": round(highlight.score, 4),
    }


def claim_checks_recompute(
    *, audit_set: AuditSet, progress: Callable[[int], None] | None = None
) -> int:
    """Recompute the matcher's checks for every claim of a set; safe to run again."""
    answers = Answer.objects.filter(audit_set=audit_set).order_by("pk")
    count = 0
    for answer in answers.iterator(chunk_size=200):
        passages = list(answer.passages.order_by("position"))
        claims = list(answer.claims.prefetch_related("citations").order_by("order", "pk"))
        rows = [
            (c, tuple(p.position for p in c.citations.all()), bool(c.cited_unknown)) for c in claims
        ]
        with transaction.atomic():
            claims_lock(claim_ids=[c.pk for c in claims])
            ClaimCheck.objects.filter(claim__answer=answer).delete()
            ClaimCheck.objects.bulk_create(answer_claim_checks(passages, rows))
            # The highlights shown changed: so did what reviewers kept of them.
            claims_changed(audit_set_id=audit_set.pk, claim_ids=[c.pk for c in claims])
        count += len(claims)
        if progress:
            progress(1)
    return count
