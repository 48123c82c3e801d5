"""A producer's close runs off the main loop (``segue.worker.closing``): a close
that blocks (a fenced producer after a broker restart took 30 s) must not hold
the caller, and the worker's shutdown waits for it only until its deadline."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from segue.worker import closing


def test_a_blocking_close_does_not_hold_the_caller() -> None:
    release = threading.Event()
    began = time.monotonic()
    closing.close_later("task 1_3", lambda: release.wait(10), slow_after=30.0)
    assert time.monotonic() - began < 0.5
    assert closing.in_flight() == 1
    assert closing.drain(time.monotonic() + 0.2) == 1  # the deadline passes first
    release.set()
    assert closing.drain(time.monotonic() + 5.0) == 0


def test_a_slow_close_is_logged_and_a_failing_one_is_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail() -> None:
        raise RuntimeError("fenced")

    with caplog.at_level(logging.DEBUG, logger="segue.worker.closing"):
        closing.close_later("task 0_1", lambda: time.sleep(0.2), slow_after=0.1)
        closing.close_later("task 0_2", fail, slow_after=30.0)
        assert closing.drain(time.monotonic() + 5.0) == 0
    assert "task 0_1: closing its producer took 0.2s" in caplog.text
    assert "task 0_2: closing its producer: fenced" in caplog.text
