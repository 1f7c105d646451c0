"""What an import stores for each answer, computed without Django: its claims (located or
split) and their machine checks. Pure, so an import can run it in worker processes while
its own process writes.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import json
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii
from typing import NamedTuple

from audit.claims import PlannedClaim, plan_claims
from audit.formats.detect import read_native_line
from audit.formats.records import AnswerRecord, FormatError, LabelRecord
from audit.stored_checks import CheckValues, PassageCache, answer_check_values


def _dumps(*, ensure_ascii: bool) -> Callable[[object], str]:
    """json.dumps with its default options but ensure_ascii, as a function that keeps its
    C encoder: json.dumps builds a new one per call, which cost more than encoding the
    few short values of an answer (4.7 against 2.6 us for a claim's highlights, 2.6
    against 0.5 us for an empty list). No check for circular values: these are parsed
    JSON and plain values."""
    if c_make_encoder is None:  # a Python without json's C speedups
        return partial(json.dumps, ensure_ascii=ensure_ascii)
    encode = c_make_encoder(
        None,
        json.JSONEncoder().default,
        encode_basestring_ascii if ensure_ascii else encode_basestring,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )
    return lambda value: "".join(encode(value, 0))


# What JSONField stores on SQLite (json.dumps with its defaults); PostgreSQL reads the same
# text into jsonb.
_json = _dumps(ensure_ascii=True)
_json_unicode = _dumps(ensure_ascii=False)


@dataclass(frozen=True)
class PlannedAnswer:
    claims: list[PlannedClaim]
    checks: list[CheckValues]  # one per claim, same order


def answer_content_hash(record: AnswerRecord) -> str:
    """Identity of an answer within a set: re-importing the same file creates nothing new."""
    payload = _json_unicode(
        [
            record.question_id,
            record.question,
            record.system,
            record.answer_id,
            record.answer,
            [[p.title, p.url, p.text] for p in record.passages],
            list(record.claims) if record.claims is not None else None,
        ]
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


class AnswerRows(NamedTuple):
    """One answer as an import writes it, in plain values: what a worker process sends
    back to the importing one. Strings, numbers and tuples only (the JSON columns already
    encoded), so pickling them in the worker and unpickling them in the importing process
    costs little beside the texts themselves; parsed records and plans would be pickled
    object by object.

    The first fields are what the checks across lines read (formats.native.LineChecks,
    detect.StreamedAnswers.take_line); an answer the set already holds carries only
    those.
    """

    location: str
    question_id: str
    question: str
    answer_id: str
    system: str
    labels: tuple[LabelRecord, ...]
    given_claims: int  # len(record.claims), 0 when the answer is split
    answer: str = ""
    metadata: str = "{}"  # Answer.metadata as stored (json.dumps)
    has_topics: bool = False  # "topics" in the metadata
    is_partial: bool = False
    # (title, url, text, is_cited) in position order.
    passages: tuple[tuple[str, str, str, bool], ...] = ()
    # One ClaimRow per claim, in order.
    claims: tuple[tuple, ...] = ()
    # A restored answer's (services.restore): one RestoredClaim per claim, in order; empty
    # for an import.
    restored: tuple[RestoredClaim, ...] = ()


class ClaimRow(NamedTuple):
    """A planned claim and its check as the import stores them (the JSON columns encoded).
    Only documents the layout: AnswerRows holds these as plain tuples, unpacked in this
    order, because a named tuple is rebuilt by calling its class when unpickled."""

    order: int
    text: str
    start: int
    end: int
    location: str
    cited_unknown_json: str  # Claim.cited_unknown
    uncited: bool
    citations: tuple[int, ...]
    cited_unknown: tuple[int, ...]
    matcher_version: str | None  # None: no machine check (a restored claim may have none)
    label: str | None
    best_score: float | None
    highlights_json: str | None
    numbers_json: str | None
    wrong_citation_json: str | None
    ungrounded: int  # numbers not grounded (selectors.release.ungrounded_numbers)


class RestoredClaim(NamedTuple):
    """What a claim restored from a citeaudit export keeps beside its ClaimRow."""

    parent_order: int | None  # an atomic claim's parent, by the parent's order
    answers_question: bool
    split_by_id: int | None
    split_at: datetime | None
    check_computed_at: datetime | None  # None: the time of the restore


def answer_rows(record: AnswerRecord, plan: PlannedAnswer | None) -> AnswerRows:
    """The answer's rows; only the fields the checks across lines read when plan is None."""
    checked = AnswerRows(
        record.location,
        record.question_id,
        record.question,
        record.answer_id,
        record.system,
        record.labels,
        len(record.claims) if record.claims is not None else 0,
    )
    if plan is None:
        return checked
    cited = {n for c in plan.claims for n in c.citations}
    claims = []
    for claim, check in zip(plan.claims, plan.checks, strict=True):
        claims.append(
            (
                claim.order,
                claim.text,
                claim.start,
                claim.end,
                claim.location,
                _json(list(claim.cited_unknown)),
                claim.uncited,
                claim.citations,
                claim.cited_unknown,
                check.matcher_version,
                check.label,
                check.best_score,
                _json(check.highlights),
                _json(check.numbers),
                None if check.wrong_citation is None else _json(check.wrong_citation),
                # selectors.release.ungrounded_numbers of the stored numbers.
                sum(1 for n in check.numbers if not n.get("grounded")),
            )
        )
    return checked._replace(
        answer=record.answer,
        metadata=_json(record.metadata),
        has_topics="topics" in record.metadata,
        is_partial=any(c.cited_unknown for c in plan.claims),
        passages=tuple(
            (p.title, p.url, p.text, position in cited)
            for position, p in enumerate(record.passages, start=1)
        ),
        claims=tuple(claims),
    )


# Held by any thread of the importing process while it does something a forked child must
# not inherit half-done (services.jobs' heartbeat writing to the cache); the pool forks
# with it held, so no child starts with a copy of a lock that thread held.
FORK_LOCK = threading.Lock()
# What a worker process (manage.py db_worker, runserver) handles itself: a child that
# inherited those handlers would treat the pool's SIGTERM as the worker's own graceful stop
# and never end, and the pool would wait for it forever.
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGQUIT") if hasattr(signal, name)
)
_PR_SET_PDEATHSIG = 1
# How long the pool's end waits for a child to end on SIGTERM before it sends SIGKILL.
_END_WAIT = 5.0


class MatcherPool:
    """A few forked processes that run this module's functions: tasks in, results out.

    Not multiprocessing's Pool: its children share one task queue and one result queue,
    each behind a lock between processes, and a child killed while it held one (waiting
    for its next task, or just after it sent a result) never gives it back: the Pool's own
    end takes both locks and waited for good, and the import, its job and its worker with
    it. Here each child has a pipe of its own each way, so nothing is shared between
    processes and a dead child blocks nobody. A thread of this process reads every result
    as it comes, so no child waits on a full pipe while its next task is written; and a
    thread per child writes its tasks, so the import never waits while a busy child's pipe
    is full (a chunk of answers is far larger than a pipe holds) and the child finds its
    next task ready as it finishes one."""

    def __init__(self, workers: int, parent: int, seen: Collection[str]) -> None:
        context = multiprocessing.get_context("fork")
        self.matchers: list[multiprocessing.process.BaseProcess] = []
        self._tasks: list = []
        self._results: list = []
        for _ in range(workers):
            task_out, task_in = context.Pipe(duplex=False)
            result_out, result_in = context.Pipe(duplex=False)
            child = context.Process(
                target=_serve,
                args=(task_out, result_in, parent, seen, self._tasks + self._results),
                daemon=True,
            )
            child.start()
            # Only the child holds its ends: when it dies, its result pipe ends (EOF) and a
            # task written to it fails at once (broken pipe).
            task_out.close()
            result_in.close()
            self.matchers.append(child)
            self._tasks.append(task_in)
            self._results.append(result_out)
        self._sent = 0
        self._waiting = [0] * workers  # tasks sent to each child and not yet answered
        self._done: dict[int, tuple[bool, object]] = {}
        self._ended: set[int] = set()  # children whose result pipe ended
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._reader = threading.Thread(target=self._read, name="matcher-results", daemon=True)
        self._reader.start()
        self._outboxes: list[queue.SimpleQueue] = [queue.SimpleQueue() for _ in self.matchers]
        self._senders = [
            threading.Thread(target=self._send, args=(n,), name=f"matcher-tasks-{n}", daemon=True)
            for n in range(workers)
        ]
        for sender in self._senders:
            sender.start()

    def apply_async(self, function: Callable, args: tuple) -> tuple[int, int]:
        """Hand a task to the child with the fewest waiting; its handle for result()."""
        with self._changed:
            child = min(
                range(len(self.matchers)), key=lambda n: (n in self._ended, self._waiting[n])
            )
            self._waiting[child] += 1
            number = self._sent
            self._sent += 1
        self._outboxes[child].put((number, function, args))
        return number, child

    def result(self, handle: tuple[int, int]):
        """The value of a task sent with apply_async (what it raised is raised here), or
        MatcherStopped if the process it was sent to died first: its answer would never
        come, and the import would wait for good."""
        number, child = handle
        with self._changed:
            while number not in self._done:
                if child in self._ended:
                    self.matchers[child].join(1)
                    raise MatcherStopped(
                        f"A matching process stopped in the middle of the import (exit code "
                        f"{self.matchers[child].exitcode}; killed, or out of memory): nothing "
                        "was imported. Run it again, with fewer CITEAUDIT_IMPORT_WORKERS if "
                        "memory is short."
                    )
                self._changed.wait(1)
            ok, value = self._done.pop(number)
        if not ok:
            raise value
        return value

    def _send(self, child: int) -> None:
        connection = self._tasks[child]
        while (task := self._outboxes[child].get()) is not None:
            try:
                connection.send(task)
            except OSError:
                pass  # The child died: its task is lost, and result() says so.
            except Exception as error:  # noqa: BLE001 - arguments that do not pickle
                self._answered(child, task[0], (False, error))

    def _answered(self, child: int, number: int, outcome: tuple[bool, object]) -> None:
        with self._changed:
            self._done[number] = outcome
            self._waiting[child] -= 1
            self._changed.notify_all()

    def _read(self) -> None:
        live = dict(zip(self._results, range(len(self._results)), strict=True))
        while live and not self._stopping.is_set():
            for connection in multiprocessing.connection.wait(list(live), timeout=0.5):
                child = live[connection]
                try:
                    number, outcome = connection.recv()
                except (EOFError, OSError):
                    del live[connection]
                    with self._changed:
                        self._ended.add(child)
                        self._changed.notify_all()
                    continue
                self._answered(child, number, outcome)

    def end(self) -> None:
        """End every child (SIGTERM, then SIGKILL if one has not ended within _END_WAIT)."""
        for outbox in self._outboxes:
            outbox.put(None)
        for child in self.matchers:
            if child.exitcode is None:
                child.terminate()
        for child in self.matchers:
            child.join(_END_WAIT)
            if child.exitcode is None:
                child.kill()
                child.join()
        # Every child is gone, so a sender still writing to one has its pipe broken now.
        for sender in self._senders:
            sender.join()
        for connection in self._tasks:
            connection.close()
        self._stopping.set()
        self._reader.join()
        for connection in self._results:
            connection.close()


def _serve(tasks, results, parent: int, seen: Collection[str], others: list) -> None:
    """A child's life: run each task it is sent and send back what came of it, in order."""
    for connection in others:  # the pipes of the children forked before it
        connection.close()
    _child_start(parent, seen)
    while True:
        try:
            number, function, args = tasks.recv()
        except EOFError:
            return
        try:
            outcome = (True, function(*args))
        except Exception as error:  # noqa: BLE001 - raised again in the importing process
            outcome = (False, error)
        try:
            results.send((number, outcome))
        except Exception as error:  # noqa: BLE001 - an error that does not pickle
            results.send((number, (False, RuntimeError(repr(error)))))


@contextlib.contextmanager
def matcher_pool(workers: int, seen: Collection[str] = frozenset()) -> Iterator[MatcherPool]:
    """A pool of `workers` forked processes that run this module's functions, ended (with
    SIGTERM) when the block ends, however it ends.

    The stop signals are blocked while it forks, so none reaches a child before it has put
    back their default handling (_child_start); a child also dies with the process that
    made it, so none outlives a worker that was killed."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        with FORK_LOCK, warnings.catch_warnings():
            # Python warns of forking beside another thread; the one a job runs beside (its
            # heartbeat) waits for FORK_LOCK, held here, so it holds no other lock now.
            warnings.filterwarnings("ignore", "This process .* multi-threaded", DeprecationWarning)
            pool = MatcherPool(workers, os.getpid(), seen)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        yield pool
    finally:
        pool.end()


class MatcherStopped(Exception):
    """A matching process died in the middle of an import (killed, or out of memory)."""


def _child_start(parent: int, seen: Collection[str]) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the importing process decides
    # what happens, and ends the pool. SIGTERM (the pool's terminate) ends a child at once.
    for number in _STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN if number != signal.SIGTERM else signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    if sys.platform == "linux":
        # The kernel ends the child when its parent dies (kill -9 included): the pipes it
        # waits on stay open in its own copy of them, so it would otherwise wait forever.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl
            os._exit(1)
    worker_start(seen)


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


def read_lines_in_worker(
    lines: Sequence[tuple[int, bytes]], filename: str
) -> tuple[list[tuple[int, str, AnswerRows]], FormatError | None]:
    """Parse, hash and plan these lines of a native file (formats.StreamedAnswers): each
    line's number, answer_content_hash and rows (only the fields the checks across lines
    read when the set already holds the answer). Stops at the first line that is refused
    and returns its error with the lines before it, for the importing process to raise
    once the checks across lines have passed those."""
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
        done.append((number, digest, answer_rows(record, plan)))
    return done, None


def plan_answers_in_worker(records: Sequence[AnswerRecord]) -> list[AnswerRows]:
    """The rows of each record, in order."""
    global _worker_cache
    if _worker_cache is None:
        _worker_cache = PassageCache()
    return [
        answer_rows(record, plan)
        for record, plan in zip(records, plan_answers(records, _worker_cache), strict=True)
    ]
