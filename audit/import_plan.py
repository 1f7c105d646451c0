"""What an import stores for each answer, computed without Django: its claims (located or
split) and their machine checks. Pure, so an import can run it in worker processes while
its own process writes.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from audit.claims import PlannedClaim, plan_claims
from audit.formats.detect import read_native_line
from audit.formats.records import AnswerRecord, FormatError
from audit.stored_checks import CheckValues, PassageCache, answer_check_values


@dataclass(frozen=True)
class PlannedAnswer:
    claims: list[PlannedClaim]
    checks: list[CheckValues]  # one per claim, same order


def answer_content_hash(record: AnswerRecord) -> str:
    """Identity of an answer within a set: re-importing the same file creates nothing new."""
    payload = json.dumps(
        [
            record.question_id,
            record.question,
            record.system,
            record.answer_id,
            record.answer,
            [[p.title, p.url, p.text] for p in record.passages],
            list(record.claims) if record.claims is not None else None,
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


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
# The content hashes already in the set when the pool started: those answers are skipped,
# so they need no plan.
_worker_seen: Collection[str] = frozenset()


def worker_start(seen: Collection[str] = frozenset()) -> None:
    """Pool initializer: what the worker inherited from the importing process (Django,
    its models and settings) is never freed, so the garbage collector stops walking it."""
    global _worker_seen
    gc.freeze()
    _worker_seen = seen


@dataclass(frozen=True)
class ReadAnswer:
    """One line of a streamed native file, read and planned in a worker."""

    number: int  # the line's number
    record: AnswerRecord
    digest: str  # answer_content_hash
    plan: PlannedAnswer | None  # None when the set already holds the answer


def read_lines_in_worker(
    lines: Sequence[tuple[int, bytes]], filename: str
) -> tuple[list[ReadAnswer], FormatError | None]:
    """Parse, hash and plan these lines of a native file (formats.StreamedAnswers); stops
    at the first line that is refused and returns its error with the lines before it, for
    the importing process to raise once the checks across lines have passed those."""
    global _worker_cache
    if _worker_cache is None:
        _worker_cache = PassageCache()
    done = []
    for number, raw in lines:
        try:
            record = read_native_line(raw, filename, number)
        except FormatError as error:
            return done, error
        digest = answer_content_hash(record)
        plan = None if digest in _worker_seen else plan_answers([record], _worker_cache)[0]
        done.append(ReadAnswer(number, record, digest, plan))
    return done, None


def plan_answers_in_worker(records: Sequence[AnswerRecord]) -> list[PlannedAnswer]:
    global _worker_cache
    if _worker_cache is None:
        _worker_cache = PassageCache()
    return plan_answers(records, _worker_cache)
