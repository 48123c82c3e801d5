"""Commits off the main loop (``worker.commit_threads``): threads and the watchdog, no Kafka.

The Kafka part of a commit is any callable here; what it does against a broker is
``tests/worker`` and the three-broker fault suite's.
"""

from __future__ import annotations

import threading
import time

from segue.worker.commit_threads import CommitThreads
from segue.worker.watchdog import Watchdog


def wait_until(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.01)


def test_a_commit_lands_with_what_was_held_meanwhile_in_order() -> None:
    commits = CommitThreads(Watchdog())
    go = threading.Event()
    commits.start("0_1", lambda: go.wait(5.0) and None)
    assert "0_1" in commits
    assert commits.hold("0_1", "a")  # type: ignore[arg-type]
    assert commits.hold("0_1", "b")  # type: ignore[arg-type]
    assert not commits.hold("0_2", "c")  # type: ignore[arg-type]  # not committing
    assert commits.landed() == []
    go.set()
    landed: list = []
    wait_until(lambda: landed.extend(commits.landed()) or landed)
    [flight] = landed
    assert (flight.task, flight.error, flight.held) == ("0_1", None, ["a", "b"])
    assert "0_1" not in commits


def test_an_error_in_the_thread_is_the_loops_to_handle() -> None:
    commits = CommitThreads(Watchdog())

    def fails() -> None:
        raise RuntimeError("commit_transaction failed")

    commits.start("0_0", fails)
    flight = commits.wait("0_0", 5.0)
    assert flight is not None
    assert isinstance(flight.error, RuntimeError)


def test_a_stuck_commit_is_seen_then_abandoned_and_forgotten_by_the_watchdog() -> None:
    dog = Watchdog(grace=0.0)
    commits = CommitThreads(dog)
    release = threading.Event()

    def hangs() -> None:
        with dog.call("send_offsets_to_transaction", 0.05):
            release.wait(10.0)

    commits.start("1_3", hangs)
    commits.start("1_4", lambda: None)
    wait_until(commits.stuck)
    [(flight, overrun)] = commits.stuck()
    assert (flight.task, overrun.call) == ("1_3", "send_offsets_to_transaction")
    assert commits.wait("1_3", 5.0) is None  # still running: returns at the overrun
    assert commits.abandon("1_3") is flight
    assert dog.stuck() is None  # the process is healthy again
    assert dog.abandoned == {"send_offsets_to_transaction": 1}  # a metric: its call
    assert "1_3" not in commits
    assert [f.task for f in commits.landed()] == ["1_4"]  # the other one went on
    release.set()
