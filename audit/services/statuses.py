"""The stored review status of claims (Claim.review_status), kept equal to the status
computed from assignments, sheets, gold and splits by services.claims_changed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, Exists, OuterRef

from audit.models import Adjudication, Assignment, AuditSheet, Claim, ReviewStatus, Severity

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
        for pk, stored, computed in _statuses(ids[start : start + CHUNK]):
            if stored != computed:
                stale[computed].append(pk)
        for status, pks in stale.items():
            changed += Claim.objects.filter(pk__in=pks).update(review_status=status)
    return changed


def _statuses(ids: list[int]) -> list[tuple[int, str, str]]:
    """(pk, stored status, computed status) of each claim.

    tests/test_statuses.py holds this equal to the same rules written as one SQL expression,
    after every step of random review sessions. Sheets and assignments are counted by
    grouped lookups over the chunk, not by correlated subqueries per claim: those were
    planned before PostgreSQL had statistics for rows just written in bulk (restoring an
    export, a bulk load) and took 267 s for 50k claims instead of 5 s.
    """
    assigned = dict(
        Assignment.objects.filter(claim_id__in=ids)
        .order_by()
        .values("claim_id")
        .annotate(n=Count("pk"))
        .values_list("claim_id", "n")
    )
    sheets = {
        claim_id: (n, kinds)
        for claim_id, n, kinds in AuditSheet.objects.filter(
            claim_id__in=ids, status=AuditSheet.Status.SUBMITTED
        )
        .order_by()
        .values("claim_id")
        .annotate(n=Count("pk"), kinds=Count("judgment", distinct=True))
        .values_list("claim_id", "n", "kinds")
    }
    rows = []
    claims = (
        Claim.objects.filter(pk__in=ids)
        .annotate(
            adjudicated=Exists(Adjudication.objects.filter(claim=OuterRef("pk"))),
            split=Exists(Claim.objects.filter(parent=OuterRef("pk"))),
        )
        .order_by()
        .values_list("pk", "severity", "review_status", "adjudicated", "split")
    )
    for pk, severity, stored, adjudicated, split in claims:
        n_assigned = assigned.get(pk, 0)
        n_sheets, kinds = sheets.get(pk, (0, 0))
        if adjudicated:
            status = ReviewStatus.ADJUDICATED
        elif split:
            status = ReviewStatus.SPLIT
        elif n_assigned == 0:
            status = ReviewStatus.UNASSIGNED
        elif n_sheets == 0:
            status = ReviewStatus.IN_REVIEW
        elif n_sheets < n_assigned:
            status = ReviewStatus.PARTLY
        elif (severity is not None and severity < Severity.CONFIRM) or kinds > 1:
            status = ReviewStatus.DISAGREEMENT
        else:
            status = ReviewStatus.SUBMITTED
        rows.append((pk, stored, str(status)))
    return rows


def set_statuses_refresh(*, audit_set_id: int) -> int:
    """claim_statuses_refresh over a whole set (after an import that restores sheets)."""
    return claim_statuses_refresh(
        claim_ids=Claim.objects.filter(answer__audit_set_id=audit_set_id).values_list(
            "pk", flat=True
        )
    )
