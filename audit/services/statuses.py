"""The stored review status of claims (Claim.review_status), kept equal to the status
computed from assignments, sheets, gold and splits by the services that change them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import F

from audit.models import Claim
from audit.selectors import computed_status

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000


def claim_statuses_refresh(*, claim_ids: Iterable[int]) -> int:
    """Store the computed status of each claim whose stored one differs; returns how many.

    Call inside the transaction that changed the claims' assignments, sheets, gold or
    split, so no reader ever sees the old status next to the new rows.
    """
    ids = sorted(set(claim_ids))
    changed = 0
    for start in range(0, len(ids), CHUNK):
        stale: dict[str, list[int]] = defaultdict(list)
        for pk, status in (
            Claim.objects.filter(pk__in=ids[start : start + CHUNK])
            .annotate(computed=computed_status())
            .exclude(review_status=F("computed"))
            .values_list("pk", "computed")
        ):
            stale[status].append(pk)
        for status, pks in stale.items():
            changed += Claim.objects.filter(pk__in=pks).update(review_status=status)
    return changed


def set_statuses_refresh(*, audit_set_id: int) -> int:
    """claim_statuses_refresh over a whole set (after an import that restores sheets)."""
    return claim_statuses_refresh(
        claim_ids=Claim.objects.filter(answer__audit_set_id=audit_set_id).values_list(
            "pk", flat=True
        )
    )
