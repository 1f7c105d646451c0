"""Answer flags derived from the stored checks of an answer's claims (audit.answer_flags),
refreshed by services.claims_changed (audit/services/derived.py) for the answers it touched."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import BooleanField, ExpressionWrapper, Q

from audit.answer_flags import CitationChecks, no_citation_verifies
from audit.models import Answer, Claim

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000


def answer_flags_refresh(*, claim_ids: Iterable[int]) -> int:
    """Recompute Answer.no_citation_verifies for the answers of these claims; returns how
    many answers changed. Only changed rows are written: a sheet's submission, which cannot
    change a check, costs two reads and no write."""
    ids = sorted(set(claim_ids))
    answer_ids: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        answer_ids.update(
            Claim.objects.filter(pk__in=ids[start : start + CHUNK])
            .order_by()
            .values_list("answer_id", flat=True)
            .distinct()
        )
    ordered = sorted(answer_ids)
    changed = 0
    for start in range(0, len(ordered), CHUNK):
        changed += _refresh(ordered[start : start + CHUNK])
    return changed


def _refresh(answer_ids: list[int]) -> int:
    stored: dict[int, bool] = dict(
        Answer.objects.filter(pk__in=answer_ids).values_list("pk", "no_citation_verifies")
    )
    claims: dict[int, list[CitationChecks]] = defaultdict(list)
    for answer_id, is_uncited, has_unknown, label, has_wrong in (
        Claim.objects.filter(answer_id__in=answer_ids, parent__isnull=True)
        .annotate(
            # Booleans computed by the database: decoding every claim's JSON in Python
            # would cost more than the rest of this refresh.
            has_unknown=ExpressionWrapper(~Q(cited_unknown=[]), output_field=BooleanField()),
            has_wrong=ExpressionWrapper(
                Q(machine_check__wrong_citation__isnull=False), output_field=BooleanField()
            ),
        )
        .order_by()
        .values_list("answer_id", "is_uncited", "has_unknown", "machine_check__label", "has_wrong")
    ):
        claims[answer_id].append(
            CitationChecks(
                cited=not is_uncited,
                cited_unknown=has_unknown,
                label=label,
                wrong_citation=has_wrong,
            )
        )
    flip = {True: [], False: []}
    for answer_id, was in stored.items():
        now = no_citation_verifies(claims.get(answer_id, ()))
        if now != was:
            flip[now].append(answer_id)
    for value, pks in flip.items():
        if pks:
            Answer.objects.filter(pk__in=pks).update(no_citation_verifies=value)
    return len(flip[True]) + len(flip[False])
