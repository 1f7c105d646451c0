"""What an import stores for each answer, computed without Django: its claims (located or
split) and their machine checks. Pure, so an import can run it in worker processes while
its own process writes.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import dataclass

from audit.claims import PlannedClaim, plan_claims
from audit.formats.records import AnswerRecord
from audit.stored_checks import CheckValues, PassageCache, answer_check_values


@dataclass(frozen=True)
class PlannedAnswer:
    claims: list[PlannedClaim]
    checks: list[CheckValues]  # one per claim, same order


def plan_answers(records: Sequence[AnswerRecord], cache: PassageCache) -> list[PlannedAnswer]:
    """Claims and checks of each record, in order."""
    planned = []
    for record in records:
        claims = plan_claims(record)
        checks = answer_check_values(
            [p.text for p in record.passages],
            [(c.text, c.citations, bool(c.cited_unknown)) for c in claims],
            cache,
        )
        planned.append(PlannedAnswer(claims=claims, checks=checks))
    return planned


# One cache per worker process: a pool's workers live for one import.
_worker_cache: PassageCache | None = None


def worker_start() -> None:
    """Pool initializer: what the worker inherited from the importing process (Django,
    its models and settings) is never freed, so the garbage collector stops walking it."""
    gc.freeze()


def plan_answers_in_worker(records: Sequence[AnswerRecord]) -> list[PlannedAnswer]:
    global _worker_cache
    if _worker_cache is None:
        _worker_cache = PassageCache()
    return plan_answers(records, _worker_cache)
