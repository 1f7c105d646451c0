"""Release facts and tallies: each top-level claim's flags as the set page's release summary
counts them (metrics.ReleaseFlags), and per set the number of claims with each combination
of flags, so that summary reads a few rows however large the set.

services.claims_changed (audit/services/derived.py), which every write path calls, refreshes
the facts of the top-level claims it touched (an atomic claim's parent included) in the same
transaction, and moves the tallies by the difference between the old facts and the new. The
label behind each fact is the report's own (selectors.top_claim_labels).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Count, F
from django.db.models.functions import Coalesce

from audit import selectors
from audit.metrics import RELEASE_FLAGS, ReleaseFlags, release_flags
from audit.models import Claim, ReleaseFact, ReleaseTally
from audit.services import bulk

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000

type Key = tuple[str, ReleaseFlags]  # (system, flags)


def release_facts_refresh(*, audit_set_id: int, claim_ids: Iterable[int]) -> int:
    """Rewrite the release facts of the top-level claims these claims are or belong to, drop
    those of claims that no longer exist or whose answer was replaced, and move the set's
    tallies by the difference; returns how many facts were written. Call with the claims
    (and their parents) locked (services/locks.py), as claims_changed does."""
    ids = sorted(set(claim_ids))
    found: set[int] = set()
    tops: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        for pk, top in (
            # A replaced answer's claims count as gone: their facts and tallies go.
            Claim.objects.filter(
                pk__in=ids[start : start + CHUNK], answer__replaced_at__isnull=True
            )
            .annotate(top=Coalesce(F("parent_id"), F("pk")))
            # Unordered: the default order joins the answers (see services/locks.py).
            .order_by()
            .values_list("pk", "top")
        ):
            found.add(pk)
            tops.add(top)
    moved: Counter[Key] = Counter()
    # Facts of deleted claims: their tallies go down, and the facts go.
    gone = sorted(set(ids) - found)
    for start in range(0, len(gone), CHUNK):
        facts = ReleaseFact.objects.filter(claim_id__in=gone[start : start + CHUNK])
        moved.subtract(_keys(facts))
        facts.delete()
    ordered = sorted(tops)
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        old = ReleaseFact.objects.filter(claim_id__in=chunk).values(
            "claim_id", "system", "topics", *RELEASE_FLAGS
        )
        had: set[int] = set()
        for row in old:
            had.add(row["claim_id"])
            moved[(row["system"], ReleaseFlags.from_row(row))] -= 1
        rows = []
        new_rows = []
        for label in selectors.top_claim_labels(claim_ids=chunk):
            flags = release_flags(label)
            moved[(label.system, flags)] += 1
            if label.claim_id in had:
                rows.append(
                    ReleaseFact(
                        claim_id=label.claim_id,
                        audit_set_id=audit_set_id,
                        system=label.system,
                        **flags.columns(),
                    )
                )
            else:
                new_rows.append(new_fact_row(audit_set_id, label.claim_id, label.system, flags))
        ReleaseFact.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["claim"],
            update_fields=["audit_set", "system", "topics", *RELEASE_FLAGS],
        )
        # A claim without a fact yet (a new claim: every one of an import) is a plain
        # insert: no model instance, no upsert to compile. The claims are locked, so no
        # other writer can insert it meanwhile.
        new_facts_insert(new_rows)
    release_tallies_move(audit_set_id, moved)
    return len(tops)


def new_fact_row(
    audit_set_id: int, claim_id: int, system: str, flags: ReleaseFlags
) -> tuple[object, ...]:
    """The release fact of a claim that has none yet, as new_facts_insert writes it."""
    return (claim_id, audit_set_id, system, *_fact_columns(flags))


@functools.lru_cache(maxsize=256)
def _fact_columns(flags: ReleaseFlags) -> tuple[object, ...]:
    # A set's claims share a few combinations of flags: each is encoded once.
    columns = flags.columns()
    return (json.dumps(columns.pop("topics")), *columns.values())


def new_facts_insert(rows: list[tuple[object, ...]]) -> None:
    bulk.insert_rows(
        ReleaseFact, ("claim_id", "audit_set_id", "system", "topics", *RELEASE_FLAGS), rows
    )


def _keys(facts) -> Counter[Key]:
    return Counter(
        (row["system"], ReleaseFlags.from_row(row))
        for row in facts.values("system", "topics", *RELEASE_FLAGS)
    )


def _tally_key(system: str, flags: ReleaseFlags) -> str:
    combination = [system, *flags.columns().values()]
    return hashlib.sha256(json.dumps(combination).encode()).hexdigest()


def release_tallies_move(audit_set_id: int, moved: Counter[Key]) -> None:
    """Add each non-zero difference to its tally, rows in key order: two writers moving the
    same tallies take their row locks in one order, after every claim lock (locks.py)."""
    changes = sorted(
        (_tally_key(system, flags), system, flags, by)
        for (system, flags), by in moved.items()
        if by
    )
    if not changes:
        return
    # A combination seen for the first time gets its row; a writer racing to create the
    # same one waits for it and then finds it there.
    ReleaseTally.objects.bulk_create(
        [
            ReleaseTally(audit_set_id=audit_set_id, key=key, system=system, **flags.columns())
            for key, system, flags, _by in changes
        ],
        ignore_conflicts=True,
    )
    for key, _system, _flags, by in changes:
        ReleaseTally.objects.filter(audit_set_id=audit_set_id, key=key).update(
            claims=F("claims") + by
        )


def release_facts_backfill() -> list[int]:
    """Write the release facts and tallies of every set that has claims but no facts yet:
    the sets created before release facts were stored. Run after `migrate` (AuditConfig
    connects it to post_migrate), so an upgraded database shows the right figures on its
    first visit. Returns the sets it filled."""
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
            release_tallies_rebuild(audit_set_id=audit_set_id)
    return filled


def release_tallies_rebuild(*, audit_set_id: int) -> int:
    """Count a set's tallies again from its release facts; returns how many rows it wrote.
    For a tally deleted by hand in the admin: the difference-moving path cannot restore it."""
    with transaction.atomic():
        ReleaseTally.objects.filter(audit_set_id=audit_set_id).delete()
        counted: Counter[Key] = Counter()
        facts = ReleaseFact.objects.filter(audit_set_id=audit_set_id)
        rows = facts.values("system", "topics", *RELEASE_FLAGS).annotate(n=Count("pk"))
        for row in rows.order_by():
            counted[(row["system"], ReleaseFlags.from_row(row))] += row["n"]
        release_tallies_move(audit_set_id, counted)
    return len(counted)
