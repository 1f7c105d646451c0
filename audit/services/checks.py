"""The matcher's machine checks on stored claims: built for an answer's claims (import,
claim splitting) and recomputed for a whole set after the matcher changed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from django.db import transaction

from audit.models import Answer, AuditSet, Claim, ClaimCheck, Passage
from audit.services.derived import claims_changed
from audit.services.locks import claims_lock
from audit.stored_checks import answer_check_values


def answer_claim_checks(
    passages: list[Passage], claims: Iterable[tuple[Claim, Sequence[int], bool]]
) -> list[ClaimCheck]:
    """Unsaved ClaimChecks for an answer's claims, each passage prepared once.

    Shared by rematch and claim splitting; imports store the same values
    (audit.stored_checks) without building model objects.
    """
    claims = list(claims)
    values = answer_check_values(
        [p.text for p in passages],
        [(claim.text, citations, has_unknown) for claim, citations, has_unknown in claims],
        positions=[p.position for p in passages],
    )
    return [
        ClaimCheck(
            claim=claim,
            matcher_version=v.matcher_version,
            label=v.label,
            best_score=v.best_score,
            highlights=v.highlights,
            numbers=v.numbers,
            wrong_citation=v.wrong_citation,
        )
        for (claim, _, _), v in zip(claims, values, strict=True)
    ]


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
