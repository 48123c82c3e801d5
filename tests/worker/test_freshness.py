"""An active task's retry fences whoever holds its transactional id: it waits for the
assignment read afresh (``worker.freshness``, ``worker.recovery``). Pure logic: the
read is a plain function here; the cut-off fault test runs it against a real API
server and broker (tests/faults/test_cutoff.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

from segue.protocol.reports import TaskErrorReason
from segue.worker.failures import Cause, Failure
from segue.worker.freshness import Freshness
from segue.worker.ownership import Task
from segue.worker.recovery import WAITS, Recovery
from segue.worker.topics import ResolvedSub

from .apps import wordcount_shape


def settle(fresh: Freshness, moment: float, timeout: float = 5.0) -> bool:
    """Ask until the read started by the first ask has answered (or not)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fresh.since(moment):
            return True
        time.sleep(0.01)
    return False


def test_fresh_only_after_a_read_that_began_later_and_its_generation_applied() -> None:
    applied = {"generation": 4}
    reads: list[float] = []

    def read() -> int:
        reads.append(time.monotonic())
        return 5  # the API server has a newer generation than the worker applied

    fresh = Freshness(read, lambda: applied["generation"])
    failed = time.monotonic()
    assert not settle(fresh, failed, timeout=0.5)  # read, but 5 is not applied yet
    assert reads
    assert reads[0] > failed
    applied["generation"] = 5
    assert fresh.since(failed)
    # a later failure needs a later read
    again = time.monotonic()
    assert not fresh.since(again)
    assert settle(fresh, again)


def test_a_read_that_fails_never_confirms_and_says_why() -> None:
    def read() -> int:
        raise TimeoutError("the API server did not answer in 5s")

    fresh = Freshness(read, lambda: 1)
    assert not settle(fresh, time.monotonic(), timeout=0.5)
    assert "did not answer" in fresh.last_error


def test_one_read_at_a_time() -> None:
    release, calls = threading.Event(), []

    def read() -> int:
        calls.append(1)
        release.wait(5)
        return 1

    fresh = Freshness(read, lambda: 1)
    moment = time.monotonic()
    for _ in range(20):
        assert not fresh.since(moment)
    release.set()
    assert settle(fresh, moment)
    assert len(calls) == 1


class Entered:
    """Recovery's restoration: what it entered (the retries that went ahead)."""

    def __init__(self) -> None:
        self.entered: list[str] = []

    def enter(self, task: Task, fence_delay: float = 0.0) -> None:
        self.entered.append(task.name)

    def take_spare(self, task: Task, close: bool = False) -> None:
        pass


def failed_task(role: Any, recovery: Recovery) -> Task:
    task = Task("1_0", wordcount_shape().get(1), ResolvedSub(1, tasks=1), role, 1)
    cause = Cause(TaskErrorReason.TRANSACTION_ABORTED, "EndTxn commit failed: Unknown broker error")
    recovery.fail(task, Failure(cause, retry=True))
    return task


def test_an_active_retry_waits_until_the_assignment_is_read_afresh() -> None:
    restoration, asked = Entered(), []
    answer = {"fresh": False}

    def fresh(moment: float) -> bool:
        asked.append(moment)
        return answer["fresh"]

    recovery = Recovery(restoration, lambda task, commit: None, None, fresh)  # type: ignore[arg-type]
    task = failed_task("active", recovery)
    assert task.retry_at is not None
    later = task.retry_at + 1
    recovery.retry_due([task], later)
    assert restoration.entered == []  # not owned for sure: no fence
    assert asked == [task.failed_at]
    assert task.retry_at == later + 0.5  # asks again soon, not after a back-off
    assert task.cause is not None  # and the status says what it waits for
    assert task.cause.reason == TaskErrorReason.TRANSACTION_ABORTED
    assert task.cause.message.endswith(WAITS)
    assert "Unknown broker error" in task.cause.message
    recovery.retry_due([task], later + 0.5)
    assert task.cause.message.count(WAITS) == 1  # said once
    answer["fresh"] = True
    recovery.retry_due([task], later + 1)
    assert restoration.entered == ["1_0"]


def test_a_standby_retry_does_not_wait() -> None:
    restoration = Entered()
    recovery = Recovery(restoration, lambda task, commit: None, None, lambda moment: False)  # type: ignore[arg-type]
    task = failed_task("standby", recovery)
    assert task.retry_at is not None
    recovery.retry_due([task], task.retry_at + 1)
    assert restoration.entered == ["1_0"]  # it fences nobody
