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

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from django.conf import settings
from django.db import connection

from audit.models import AuditSet, Claim

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000

# The first key of PostgreSQL advisory locks on a set's imports (the second is the set's id):
# an arbitrary constant that no other advisory lock of the app uses.
_IMPORTS_LOCK = 0x5E7_1A7


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


def set_imports_lock(*, audit_set_id: int) -> None:
    """Make imports into one set take turns, until this transaction ends.

    Two imports of runs that share question ids would each create the questions they did not
    find, and the second would fail on the set's unique question id once the first commits.
    Taken before the import reads the set's questions and answers, it reads them as the
    import before it left them. On PostgreSQL a transaction-level advisory lock, which
    blocks nothing but other imports into the same set; on SQLite every write transaction
    already holds the one write lock from its BEGIN (IMMEDIATE).
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        # The two-int form keys on (namespace, id); an id past int4 wraps, which only
        # makes two sets share a turn.
        key = (audit_set_id + 2**31) % 2**32 - 2**31
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_IMPORTS_LOCK, key])


@contextmanager
def write_lock_wait(seconds: float | None = None) -> Iterator[None]:
    """Within the block, wait up to `seconds` (JOB_SQLITE_BUSY_TIMEOUT) for SQLite's write
    lock instead of SQLITE_BUSY_TIMEOUT.

    A request gives up soon and answers 503, since a person waits on it; a job or a
    command has nobody waiting, and another import may hold the lock for minutes (an
    import is one transaction). Nothing on PostgreSQL, where writers wait on rows.
    """
    if connection.vendor != "sqlite":
        yield
        return
    if seconds is None:
        seconds = settings.JOB_SQLITE_BUSY_TIMEOUT
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        before = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
    try:
        yield
    finally:
        # The connection may have been closed by the block (a worker closes stale ones).
        if connection.connection is not None:
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA busy_timeout = {int(before)}")


# The waits of the tasks this process runs, by task id, from task_started to task_finished.
_task_waits: dict[str, ExitStack] = {}


def task_write_lock_wait_start(sender: Any, task_result: Any, **kwargs: Any) -> None:
    """task_started receiver: a worker's task (a job, a webhook delivery) waits for the write
    lock as write_lock_wait does, from before its job's first write to after the worker
    records how the task ended (which the worker does past the task's own code)."""
    stack = ExitStack()
    stack.enter_context(write_lock_wait())
    _task_waits[task_result.id] = stack


def task_write_lock_wait_end(sender: Any, task_result: Any, **kwargs: Any) -> None:
    """task_finished receiver: back to a request's wait."""
    stack = _task_waits.pop(task_result.id, None)
    if stack is not None:
        stack.close()
