"""Row locks in the one order every write path takes them, so two writers never wait on each
other in a cycle (PostgreSQL's DeadlockDetected): the audit set, then claims by ascending pk,
then sheets, then gold and derived rows (statuses, tallies, facts).

Locks are FOR NO KEY UPDATE: they serialise writers of the same rows but never block a
transaction that only inserts a row referring to them (an assignment, a sheet, a fact), whose
foreign-key check takes a KEY SHARE lock. A plain FOR UPDATE would, and that insert could
already hold locks of its own. SQLite has no row locks: there every write transaction begins
IMMEDIATE (settings), which serialises writers on the whole file instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from audit.models import AuditSet, Claim

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000


def audit_set_lock(*, audit_set_id: int) -> AuditSet:
    """Lock a set's row, before any of its claims; returns it as it is now."""
    return AuditSet.objects.select_for_update(no_key=True).get(pk=audit_set_id)


def claims_lock(*, claim_ids: Iterable[int]) -> list[int]:
    """Lock these claims' rows in ascending pk order; returns the pks that exist.

    Call inside the transaction, before reading or writing their sheets, assignments or
    gold. Taking a lock already held is free, so later helpers may lock again.

    An atomic claim's parent (the claim it was split from) is locked with it, in the same
    ascending order: the parent's release fact is derived from all its atomic claims, so two
    writers on two atomic claims of one parent must not both derive it from before the
    other's change.
    """
    ids = set(claim_ids)
    asked = sorted(ids)
    for start in range(0, len(asked), CHUNK):
        ids.update(
            # No default ordering: ordering by the answer joins it, and once a large set
            # has statistics SQLite then scans every answer for each chunk.
            Claim.objects.filter(pk__in=asked[start : start + CHUNK], parent__isnull=False)
            .order_by()
            .values_list("parent_id", flat=True)
        )
    ids = sorted(ids)
    found: list[int] = []
    for start in range(0, len(ids), CHUNK):
        found += (
            Claim.objects.select_for_update(no_key=True)
            .filter(pk__in=ids[start : start + CHUNK])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    return found
