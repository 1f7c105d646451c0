"""Release facts: each top-level claim's flags as the set page's release summary counts them
(metrics.ReleaseFlags), so that summary is one GROUP BY however large the set.

services.claims_changed (audit/services/derived.py), which every write path calls, refreshes
the facts of the top-level claims it touched (an atomic claim's parent included) in the same
transaction. The label behind each fact is the report's own (selectors.top_claim_labels).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Coalesce

from audit import selectors
from audit.metrics import release_flags
from audit.models import Claim, ReleaseFact

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000
_FIELDS = [
    "audit_set",
    "system",
    "worthy",
    "supported",
    "judged_supported",
    "provisional",
    "contradicted",
    "wrong_citation",
    "uncited_worthy",
    "numbers_failing",
    "topics",
]


def release_facts_refresh(*, audit_set_id: int, claim_ids: Iterable[int]) -> int:
    """Rewrite the release facts of the top-level claims these claims are or belong to;
    returns how many were written. Call with the claims (and their parents) locked
    (services/locks.py), as claims_changed does."""
    ids = sorted(set(claim_ids))
    tops: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        tops.update(
            Claim.objects.filter(pk__in=ids[start : start + CHUNK])
            .annotate(top=Coalesce(F("parent_id"), F("pk")))
            .values_list("top", flat=True)
        )
    ordered = sorted(tops)
    written = 0
    for start in range(0, len(ordered), CHUNK):
        labels = selectors.top_claim_labels(claim_ids=ordered[start : start + CHUNK])
        rows = []
        for label in labels:
            flags = release_flags(label)
            rows.append(
                ReleaseFact(
                    claim_id=label.claim_id,
                    audit_set_id=audit_set_id,
                    system=label.system,
                    worthy=flags.worthy,
                    supported=flags.supported,
                    judged_supported=flags.judged_supported,
                    provisional=flags.provisional,
                    contradicted=flags.contradicted,
                    wrong_citation=flags.wrong_citation,
                    uncited_worthy=flags.uncited_worthy,
                    numbers_failing=flags.numbers_failing,
                    topics=list(flags.topics),
                )
            )
        ReleaseFact.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["claim"],
            update_fields=_FIELDS,
        )
        written += len(rows)
    return written


def release_facts_backfill() -> list[int]:
    """Write the release facts of every set that has claims but none yet: the sets created
    before release facts were stored. Run after `migrate` (AuditConfig connects it to
    post_migrate), so an upgraded database shows the right figures on its first visit.
    Returns the sets it filled."""
    if ReleaseFact._meta.db_table not in connection.introspection.table_names():
        return []  # migrated back below the table
    pending = (
        Claim.objects.filter(parent__isnull=True)
        .exclude(answer__audit_set_id__in=ReleaseFact.objects.values("audit_set_id"))
        .values_list("answer__audit_set_id", flat=True)
        .distinct()
        .order_by("answer__audit_set_id")
    )
    filled = list(pending)
    for audit_set_id in filled:
        with transaction.atomic():
            release_facts_refresh(
                audit_set_id=audit_set_id,
                claim_ids=Claim.objects.filter(
                    answer__audit_set_id=audit_set_id, parent__isnull=True
                ).values_list("pk", flat=True),
            )
    return filled
