"""The step pool: urgent steps first, routine ones on at most half the threads."""

from __future__ import annotations

import threading
import time

import pytest

from segue.operator.steps import StepPool


def test_an_urgent_step_runs_while_routine_ones_hold_their_half() -> None:
    pool = StepPool(4)
    release = threading.Event()
    started: list[str] = []
    lock = threading.Lock()

    def routine(i: int) -> int:
        with lock:
            started.append(f"r{i}")
        release.wait(10)
        return i

    try:
        slow = [pool.submit(lambda i=i: routine(i), urgent=False) for i in range(6)]
        time.sleep(0.3)
        assert len(started) == 2, started  # half the threads, the rest queue
        assert pool.queued() == (0, 4)
        urgent = pool.submit(lambda: "scaled", urgent=True)
        assert urgent.result(timeout=5) == "scaled"  # not behind the six routine looks
        assert not any(f.done() for f in slow)
        release.set()
        assert [f.result(timeout=10) for f in slow] == list(range(6))
    finally:
        release.set()
        pool.close()


def test_queued_urgent_steps_go_before_queued_routine_ones() -> None:
    pool = StepPool(2)  # one routine thread
    gate = threading.Event()
    order: list[str] = []
    try:
        pool.submit(lambda: gate.wait(10), urgent=False)
        pool.submit(lambda: gate.wait(10), urgent=True)  # both threads busy now
        time.sleep(0.2)
        later = [
            pool.submit(lambda: order.append("routine"), urgent=False),
            pool.submit(lambda: order.append("urgent"), urgent=True),
        ]
        gate.set()
        for f in later:
            f.result(timeout=5)
        assert order[0] == "urgent", order
    finally:
        gate.set()
        pool.close()


def test_a_failed_step_hands_its_error_to_the_loop_and_close_cancels_the_queue() -> None:
    pool = StepPool(2)
    gate = threading.Event()

    def boom() -> None:
        raise ValueError("step failed")

    with pytest.raises(ValueError, match="step failed"):
        pool.submit(boom, urgent=True).result(timeout=5)
    pool.submit(lambda: gate.wait(10), urgent=False)
    time.sleep(0.1)
    queued = pool.submit(lambda: None, urgent=False)  # the one routine thread is busy
    pool.close()
    gate.set()
    assert queued.cancelled()
    with pytest.raises(RuntimeError, match="closed"):
        pool.submit(lambda: None, urgent=True)


def test_routine_steps_start_at_the_rate_urgent_ones_at_once() -> None:
    pool = StepPool(4, routine_rate=10.0)  # a burst of min(rate, workers) = 4, then 10/s
    try:
        began = time.monotonic()
        looks = [pool.submit(time.monotonic, urgent=False) for _ in range(10)]
        urgent = pool.submit(time.monotonic, urgent=True)
        assert urgent.result(timeout=5) - began < 0.2
        starts = sorted(f.result(timeout=10) - began for f in looks)
        assert starts[3] < 0.2, starts  # the burst
        assert starts[-1] >= 0.45, starts  # six more at 10/s
        assert starts[-1] < 3.0, starts  # generous: a loaded machine
    finally:
        pool.close()


def test_a_queued_routine_step_promoted_runs_before_the_routine_queue() -> None:
    pool = StepPool(2, routine_rate=1.0)  # one routine thread, one token a second
    gate = threading.Event()
    try:
        pool.submit(lambda: gate.wait(10), urgent=False)  # takes the token and the thread
        queued = [pool.submit(time.monotonic, urgent=False) for _ in range(3)]
        time.sleep(0.1)
        began = time.monotonic()
        assert pool.promote(queued[2])  # its app was woken: a scale
        assert queued[2].result(timeout=5) - began < 0.5
        assert not queued[0].done()
        assert not pool.promote(queued[2])  # started already
    finally:
        gate.set()
        pool.close()
