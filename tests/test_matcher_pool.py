"""The import's matching processes: a pool whose child was killed still ends.

Without a database: the pool and its children are plain processes."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from audit.import_plan import MatcherStopped, matcher_pool

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


def _sleep(seconds):
    time.sleep(seconds)
    return seconds


def _fail(message):
    raise ValueError(message)


@pytest.mark.parametrize("pause", [0, 0.2])
@pytest.mark.parametrize("round_", range(5))
def test_a_matcher_killed_while_it_waited_for_a_task_fails_the_import_and_the_pool_ends(
    pause, round_
):
    # With multiprocessing's Pool, an idle child waited for its next task holding the task
    # queue's lock, and one that had just sent a result could still hold the result
    # queue's: killed there, it never gave it back, and the Pool's own end waited for that
    # lock for good (the import's job never ended). Killed at once after its answer (that
    # second case) and a while after it (the first), several times over.
    def body() -> None:
        with matcher_pool(1) as pool:
            assert pool.result(pool.apply_async(_echo, (1,))) == 1
            time.sleep(pause)
            child = pool.matchers[0]
            os.kill(child.pid, signal.SIGKILL)
            child.join(STUCK_AFTER)
            pool.result(pool.apply_async(_echo, (2,)))

    outcome = _in_thread(body)

    assert outcome, "the pool never ended after its idle matcher was killed"
    assert isinstance(outcome[0], MatcherStopped), outcome
    assert "exit code -9" in str(outcome[0])


def test_a_matcher_killed_in_the_middle_of_a_task_fails_it_and_its_partner_is_ended():
    def body() -> None:
        with matcher_pool(2) as pool:
            busy = pool.apply_async(_sleep, (30,))
            other = pool.apply_async(_sleep, (30,))
            children = list(pool.matchers)
            time.sleep(0.3)
            os.kill(children[busy[1]].pid, signal.SIGKILL)
            try:
                pool.result(busy)
            finally:
                assert other[1] != busy[1]
        # The living child was ended too, long before its 30 s task was done.
        assert all(child.exitcode is not None for child in children)

    outcome = _in_thread(body)

    assert outcome and isinstance(outcome[0], MatcherStopped), outcome


def test_what_a_task_raised_is_raised_in_the_importing_process_and_the_pool_goes_on():
    def body() -> None:
        with matcher_pool(1) as pool:
            with pytest.raises(ValueError, match="refused"):
                pool.result(pool.apply_async(_fail, ("refused",)))
            assert pool.result(pool.apply_async(_echo, (3,))) == 3

    assert _in_thread(body) == ["ended"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pool_whose_children_all_lived_ends_with_every_result(workers):
    results = []

    def body() -> None:
        with matcher_pool(workers) as pool:
            pending = [pool.apply_async(_echo, (n,)) for n in range(20)]
            results.extend(pool.result(r) for r in pending)
            children = list(pool.matchers)
        assert all(child.exitcode is not None for child in children)

    assert _in_thread(body) == ["ended"]
    assert results == list(range(20))


def _wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.01)
    return "went on"


def test_handing_a_busy_matcher_more_than_its_pipe_holds_does_not_wait_for_it(tmp_path):
    # A chunk of answers is far larger than a pipe holds: written by the importing process
    # itself, it waited (parsing and writing nothing) until the busy child read it.
    go_on = tmp_path / "go-on"
    large = "x" * (4 * 1024 * 1024)
    handed: list = []

    def body() -> None:
        with matcher_pool(1) as pool:
            waiting = pool.apply_async(_wait_for, (str(go_on),))
            handed.append(pool.apply_async(_echo, (large,)))
            handed.append(pool.apply_async(_echo, (large,)))
            # Only now may the child go on: both tasks were handed while it was busy.
            go_on.touch()
            assert pool.result(waiting) == "went on"
            assert [len(pool.result(handle)) for handle in handed[:2]] == [len(large)] * 2

    assert _in_thread(body) == ["ended"]
    assert len(handed) == 2


def test_a_task_whose_arguments_do_not_pickle_fails_alone():
    def body() -> None:
        with matcher_pool(1) as pool:
            refused = pool.apply_async(_echo, (lambda: None,))
            with pytest.raises(Exception, match="pickle"):
                pool.result(refused)
            assert pool.result(pool.apply_async(_echo, (4,))) == 4

    assert _in_thread(body) == ["ended"]
