"""The watchdog that notices a blocking Kafka call past its bound: pure, on a fake clock."""

from __future__ import annotations

import threading
import time

import pytest

from segue.protocol.probes import LIVENESS_TOLERANCE_SECONDS
from segue.worker import fencing, kafka
from segue.worker.watchdog import (
    EXIT_AFTER,
    EXIT_STUCK,
    GRACE,
    Overrun,
    Watchdog,
    monitor,
    must_exit,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_call_within_its_bound_is_not_stuck() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=5.0)
    with dog.call("flush", 30.0):
        clock.now += 34.9
        assert dog.stuck() is None
    assert dog.overruns == {}


def test_a_call_past_its_timeout_plus_grace_is_stuck_and_named() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=5.0)
    with dog.call("send_offsets_to_transaction", 30.0):
        clock.now += 42.0
        stuck = dog.stuck()
        assert stuck == Overrun("send_offsets_to_transaction", 42.0, 35.0)
        assert stuck.describe() == (
            "Kafka call send_offsets_to_transaction blocked for 42.0s (bound 35.0s)"
        )
        clock.now += 10.0
        assert dog.stuck() == Overrun("send_offsets_to_transaction", 52.0, 35.0)
    assert dog.stuck() is None  # it returned: healthy again
    assert dog.overruns == {"send_offsets_to_transaction": 1}  # counted once


def test_an_overrun_nobody_looked_at_is_counted_when_the_call_returns() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=1.0)
    with dog.call("commit_transaction", 2.0):
        clock.now += 3.5
    with dog.call("commit_transaction", 2.0):
        clock.now += 1.0
    assert dog.overruns == {"commit_transaction": 1}


def test_the_ceiling_caps_every_bound() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=5.0, ceiling=3.0)
    assert dog.bound(30.0) == 3.0
    assert dog.bound(0.0) == 3.0
    with dog.call("flush", 30.0):
        clock.now += 4.0
        assert dog.stuck() == Overrun("flush", 4.0, 3.0)


def test_the_call_furthest_past_its_bound_is_reported() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=0.0)
    with dog.call("init_transactions", 30.0), dog.call("list_topics", 1.0):
        clock.now += 31.0
        assert dog.stuck() == Overrun("list_topics", 31.0, 1.0)
    assert dog.overruns == {"init_transactions": 1, "list_topics": 1}


def test_an_exception_ends_the_call_too() -> None:
    clock = Clock()
    dog = Watchdog(clock)
    with pytest.raises(RuntimeError), dog.call("flush", 1.0):
        raise RuntimeError("broker down")
    assert dog.stuck() is None


def test_the_worker_exits_only_once_stuck_long_enough() -> None:
    assert not must_exit(None, 15.0)
    assert not must_exit(Overrun("flush", 49.0, 35.0), 15.0)
    assert must_exit(Overrun("flush", 50.0, 35.0), 15.0)


def test_the_monitor_exits_the_process_when_a_call_stays_stuck() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=0.0)
    exited = threading.Event()
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        exited.set()

    with dog.call("send_offsets_to_transaction", 1.0):
        clock.now += 100.0
        monitor(dog, exit_after=10.0, every=0.01, exit=fake_exit)
        assert exited.wait(5.0)
    assert codes == [EXIT_STUCK]


def test_the_probes_and_metrics_name_a_stuck_call() -> None:
    import urllib.error
    import urllib.request

    from prometheus_client import generate_latest

    from segue.worker.http import serve
    from segue.worker.metrics import Snapshot, WorkerMetrics

    def get(port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    clock = Clock()
    dog = Watchdog(clock, grace=5.0)
    metrics = WorkerMetrics(watchdog=dog)
    metrics.publish(Snapshot(generation=1, ready=True))
    server = serve(metrics, "127.0.0.1", 0)
    port = server.server_address[1]
    try:
        with dog.call("send_offsets_to_transaction", 10.0):
            assert get(port, "/healthz") == (200, "ok\n")
            assert get(port, "/readyz") == (200, "ready\n")
            clock.now += 16.25
            status, body = get(port, "/healthz")
            assert (status, body) == (
                503,
                "Kafka call send_offsets_to_transaction blocked for 16.2s (bound 15.0s)\n",
            )
            assert get(port, "/readyz")[0] == 503
            text = generate_latest(metrics.registry).decode()
            assert 'segue_kafka_call_overruns_total{call="send_offsets_to_transaction"} 1.0' in text
            assert "segue_kafka_calls_abandoned_total{" not in text  # none abandoned
            assert "segue_worker_ready 0.0" in text
        assert get(port, "/healthz") == (200, "ok\n")
    finally:
        server.shutdown()


def test_a_call_may_bring_its_own_grace() -> None:
    clock = Clock()
    dog = Watchdog(clock, grace=5.0)
    assert dog.bound(3.0, 2.0) == 5.0
    assert dog.bound(3.0) == 8.0
    with dog.call("send_offsets_to_transaction", 3.0, 2.0):
        clock.now += 5.5
        assert dog.stuck() == Overrun("send_offsets_to_transaction", 5.5, 5.0)


def test_a_hung_commit_ends_the_worker_well_within_the_fault_suites_15_s() -> None:
    """A call on the main loop with a commit's timeout and grace, hung, makes the worker
    exit 7 s after it began (bound 5 s, exit 2 s later); the restart then has 8 s
    (docs/reliability.md). A commit's own thread is abandoned at the bound instead
    (worker/committing.py), long before."""
    from segue.worker.kafka import COMMIT_GRACE, COMMIT_TIMEOUT
    from segue.worker.watchdog import EXIT_AFTER

    clock = Clock()
    dog = Watchdog(clock)
    with dog.call("send_offsets_to_transaction", COMMIT_TIMEOUT, COMMIT_GRACE):
        clock.now += 6.9
        assert not must_exit(dog.stuck(), EXIT_AFTER)
        clock.now += 0.1
        assert must_exit(dog.stuck(), EXIT_AFTER)


def test_a_forgotten_thread_no_longer_counts_as_stuck() -> None:
    """A task's commit thread abandoned to a hung call (``committing``): the process
    lives on, whatever the thread does next, until it ends."""
    clock = Clock()
    dog = Watchdog(clock, grace=0.0)
    inside, release = threading.Event(), threading.Event()
    seen: list[Overrun | None] = []

    def hung() -> None:
        with dog.call("send_offsets_to_transaction", 1.0):
            inside.set()
            release.wait(5.0)
        with dog.call("commit_transaction", 1.0):  # after forget: not watched either
            clock.now += 10.0
            seen.append(dog.stuck())

    thread = threading.Thread(target=hung)
    thread.start()
    assert inside.wait(5.0)
    clock.now += 2.0
    assert dog.stuck(thread.ident) == Overrun("send_offsets_to_transaction", 2.0, 1.0)
    assert dog.stuck(threading.get_ident()) is None  # the main thread's own: none
    dog.forget(thread.ident or 0)
    assert dog.stuck() is None
    release.set()
    thread.join(5.0)
    assert seen == [None]
    assert dog.overruns == {"send_offsets_to_transaction": 1}  # the one seen before
    assert dog.abandoned == {"send_offsets_to_transaction": 1}
    dog.remember(thread.ident or 0)
    with dog.call("flush", 1.0):  # the ident, reused, counts again
        clock.now += 2.0
        assert dog.stuck() == Overrun("flush", 2.0, 1.0)


def test_a_spared_threads_stuck_call_fails_the_probes_but_never_exits() -> None:
    """A task's commit thread (``commit_threads``) is the loop's to abandon, even while
    the loop is busy elsewhere for longer than the exit delay."""
    clock = Clock()
    dog = Watchdog(clock, grace=0.0)
    inside, release = threading.Event(), threading.Event()
    codes: list[int] = []

    def commit() -> None:
        dog.spare(threading.get_ident())
        with dog.call("send_offsets_to_transaction", 1.0):
            inside.set()
            release.wait(5.0)

    thread = threading.Thread(target=commit)
    thread.start()
    assert inside.wait(5.0)
    clock.now += 100.0
    assert dog.stuck() == Overrun("send_offsets_to_transaction", 100.0, 1.0)  # the probes
    assert dog.stuck(sparing=True) is None
    monitor(dog, exit_after=1.0, every=0.01, exit=codes.append)
    time.sleep(0.2)
    assert codes == []
    with dog.call("init_transactions", 1.0):  # the loop's own, stuck: that one exits
        clock.now += 5.0
        deadline = time.monotonic() + 5.0
        while not codes and time.monotonic() < deadline:
            time.sleep(0.01)
    assert codes == [EXIT_STUCK]
    release.set()
    thread.join(5.0)


def test_the_liveness_probe_outlasts_the_longest_call_the_loop_may_be_in() -> None:
    """A stuck commit is the loop's to abandon once the loop is free: the loop's longest
    bounded call plus the exit delay must end before the probe restarts the pod."""
    dog = Watchdog()
    longest = max(
        dog.bound(t) for t in (fencing.INIT_TIMEOUT, kafka.COMMITTED_TIMEOUT, kafka.CLOSE_TIMEOUT)
    )
    assert longest == max(fencing.INIT_TIMEOUT, kafka.COMMITTED_TIMEOUT) + GRACE
    assert longest + EXIT_AFTER + 1.0 < LIVENESS_TOLERANCE_SECONDS
