"""A producer's close runs off the main loop (``segue.worker.closing``): a close
that blocks (a fenced producer after a broker restart took 30 s) must not hold
the caller, and the worker's shutdown waits for it only until its deadline."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from confluent_kafka import Producer

from segue.stack.kafka import KafkaBroker
from segue.worker import closing
from segue.worker.transaction import TaskTransaction


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


def test_an_abandoned_producer_closes_only_once_its_hung_call_returns(kafka: KafkaBroker) -> None:
    """``Producer.close()`` destroys the client under any call still running on it (a
    use after free). A commit abandoned in a call (``committing``) keeps its producer
    until the call returns; stopping the worker does not wait for that."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    release = threading.Event()
    hung = threading.Thread(target=release.wait, args=(30.0,), daemon=True)  # the call
    hung.start()
    txn = TaskTransaction("0_0", producer=producer, stores={}, consumer=None)  # type: ignore[arg-type]
    txn.abandon(hung)
    closer = txn.close()
    closer.join(1.0)
    assert closer.is_alive(), "closed under the call still running"
    assert producer.poll(0) == 0  # open
    assert closing.drain(time.monotonic() + 0.1) == 0  # not waited for when stopping
    release.set()
    closer.join(10.0)
    assert not closer.is_alive(), "not closed once the call returned"
    with pytest.raises(RuntimeError, match="closed"):
        producer.poll(0)
