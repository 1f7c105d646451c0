"""The import's matching processes: a pool whose child was killed still ends.

Without a database: the pool and its children are plain processes."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from audit.import_plan import MatcherStopped, matcher_pool, matcher_result

# How long the pool's end may take before the test calls it stuck: far above the pool's
# own wait for a dead child's lock, and the thread is left behind if it is stuck.
STUCK_AFTER = 60


def _echo(value):
    return value


def _in_thread(body) -> list:
    """Run body in a thread; what it raised, or "ended", or nothing if it is stuck."""
    outcome: list = []

    def run() -> None:
        try:
            body()
            outcome.append("ended")
        except BaseException as error:  # noqa: BLE001 - the test reads it
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(STUCK_AFTER)
    return outcome


def test_a_matcher_killed_while_it_waited_for_a_task_fails_the_import_and_the_pool_ends():
    # An idle child waits for its next task holding the task queue's read lock. Killed
    # there, it never gives the lock back: multiprocessing's own Pool.terminate waited for
    # that lock for good, and the import's job never ended.
    def body() -> None:
        with matcher_pool(1) as pool:
            assert matcher_result(pool, pool.apply_async(_echo, (1,))) == 1
            child = pool.matchers[0]
            os.kill(child.pid, signal.SIGKILL)
            child.join(STUCK_AFTER)
            matcher_result(pool, pool.apply_async(_echo, (2,)))

    outcome = _in_thread(body)

    assert outcome, "the pool never ended after its idle matcher was killed"
    assert isinstance(outcome[0], MatcherStopped), outcome


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pool_whose_children_all_lived_ends_with_every_result(workers):
    results = []

    def body() -> None:
        with matcher_pool(workers) as pool:
            pending = [pool.apply_async(_echo, (n,)) for n in range(20)]
            results.extend(matcher_result(pool, r) for r in pending)
            children = list(pool.matchers)
        assert all(child.exitcode is not None for child in children)

    assert _in_thread(body) == ["ended"]
    assert results == list(range(20))
