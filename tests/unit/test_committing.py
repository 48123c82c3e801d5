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


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Slow:
    """An active task whose records take ``cost`` s each on ``clock``: its transactions'
    lengths, in records, as they are committed."""

    def __init__(self, clock: Clock, cost: float, interval: float) -> None:
        self.clock, self.cost, self.interval = clock, cost, interval
        self.in_txn, self.started, self.open = False, 0.0, 0
        self.done: list[object] = []
        self.transactions: list[int] = []

    def process(self, msg: object) -> None:
        if not self.in_txn:
            self.in_txn, self.started = True, self.clock.now
        self.clock.now += self.cost
        self.done.append(msg)
        self.open += 1

    def commit_due(self, now: float) -> bool:
        return self.in_txn and now - self.started >= self.interval

    def prepare_commit(self) -> None:
        self.transactions.append(self.open)

    def send_commit(self, timeout: float) -> None:
        pass

    def finish_commit(self) -> None:
        self.in_txn, self.open = False, 0


class Owned:
    def __init__(self, name: str, active: Slow) -> None:
        self.name, self.active = name, active


def test_a_backlog_held_during_a_commit_runs_in_transactions_of_the_commit_interval() -> None:
    """4 ms records, a 100 ms commit interval, 2,000 records held while a commit is in
    flight: each transaction holds about 25 records once the commit lands, never the whole
    backlog (8 s of work, held in one transaction, outlived the broker's 10 s
    transaction timeout once several tasks did so in turn: the broker aborted them and
    the tasks were fenced)."""
    from segue.worker.committing import Committing

    clock = Clock()
    active = Slow(clock, cost=0.004, interval=0.1)
    task = Owned("0_5", active)
    failures: list[object] = []
    committing = Committing(lambda t, f: failures.append(f), CommitThreads(Watchdog()), clock)
    records = [f"r{i}" for i in range(2000)]
    committing.take(task, records[0])  # type: ignore[arg-type]
    clock.now += 0.1
    committing.due([task], clock.now)  # type: ignore[list-item]
    assert "0_5" in committing.threads  # in flight: the rest is held
    for msg in records[1:]:
        committing.take(task, msg)  # type: ignore[arg-type]
    assert active.done == records[:1]
    # the loop: commits land (their thread is done at once) and the next ones start
    wait_until(lambda: committing.due([task], clock.now) or len(active.done) == len(records))  # type: ignore[func-returns-value,list-item]
    committing.due([task], clock.now)  # type: ignore[list-item]  # the last one
    assert active.done == records  # all of them, in order
    assert not failures
    # a transaction ends with the first record at or past 100 ms: 25 of 4 ms, or 26 where
    # the floats' sum of 25 falls a hair short
    assert max(active.transactions) <= 26, active.transactions


def test_a_fetched_batch_commits_between_two_records_once_due() -> None:
    """A batch of 500 of the task's records from one fetch (2 s of 4 ms records): its
    commit starts at the record that makes it due, and the rest waits for it."""
    from segue.worker.committing import Committing

    clock = Clock()
    active = Slow(clock, cost=0.004, interval=0.1)
    task = Owned("1_0", active)
    committing = Committing(lambda t, f: None, CommitThreads(Watchdog()), clock)
    for i in range(500):
        committing.take(task, i)  # type: ignore[arg-type]
    assert "1_0" in committing.threads
    assert active.transactions == [len(active.done)]
    assert len(active.done) <= 26
