"""Crash recovery: kill -9 mid-stream, restart, exact counts, and only the tail
of each changelog restored (asserted on restored record counts)."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from segue.worker.state.layout import StateLayout

from .harness import create_topics, read_committed
from .scenarios import SteadyProducer, check_exact

pytestmark = pytest.mark.worker

# A commit reaches disk once the worker's next read of its changelogs' ends (every
# 2 s) shows it stable (docs/worker.md, "State stores"): by then each store has a
# checkpoint, and the kill leaves a tail after it.
DURABLE = 5.0
RESTORED = re.compile(r"restored task=(\S+) store=(\S+) from=(\d+) to=(\d+) records=(\d+)")


def restored_lines(log: str) -> dict[str, tuple[int, int, int]]:
    return {
        m.group(1): (int(m.group(3)), int(m.group(4)), int(m.group(5)))
        for m in RESTORED.finditer(log)
    }


def committed_records(bootstrap: str, topic: str, partition: int, start: int, end: int) -> int:
    """Data records a read_committed consumer sees in [start, end) of one partition."""
    return committed(bootstrap, topic, partition, start, end)[0]


def committed(bootstrap: str, topic: str, partition: int, start: int, end: int) -> tuple[int, int]:
    """Data records a read_committed consumer sees in [start, end) of one partition, and
    their key+value bytes."""
    if start >= end:
        return 0, 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"count-{uuid.uuid4()}",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, partition, start)])
    count, size, deadline = 0, 0, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is not None:
                    assert msg.error().code() == KafkaError._PARTITION_EOF
                    if msg.offset() >= end:
                        return count, size
                    continue
                if msg.offset() >= end:
                    return count, size
                count += 1
                size += len(msg.key() or b"") + len(msg.value() or b"")
    finally:
        consumer.close()
    raise AssertionError(f"{topic}[{partition}] did not reach {end}")


def _setup(kafka: Any, partitions: int = 2) -> tuple[str, str, str, dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: partitions, output: partitions})
    return app_id, source, output, {"application_id": app_id, "input": source, "output": output}


def _local_checkpoints(state_dir: Path, app_id: str, tasks: list[str]) -> dict[str, int]:
    layout = StateLayout(state_dir, app_id)
    return {t: layout.local_checkpoints(t)["counts"].offset for t in tasks}


def test_kill9_midstream_then_restart_counts_exactly(
    kafka: Any, spawn: Any, assign: Any, tmp_path: Path
) -> None:
    app_id, source, output, args = _setup(kafka)
    tasks = ["0_0", "0_1"]
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": tasks}})
    state = tmp_path / "w0-state"
    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_ready()
    producer = SteadyProducer(kafka.bootstrap_servers, source, 2, keys=40, rate=1500)
    producer.start()
    w0.wait_for(
        "2000 records processed",
        lambda: (
            sum(w0.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 2000
        ),
    )
    time.sleep(DURABLE)
    w0.kill()  # mid-stream: the producer keeps writing, transactions are open
    checkpoints = _local_checkpoints(state, app_id, tasks)
    assert all(offset > 0 for offset in checkpoints.values()), checkpoints

    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_ready()
    produced = producer.stop()
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= produced)
    check_exact(records, producer.sent)

    changelog = f"{app_id}-counts-changelog"
    lines = restored_lines(w0.log())
    for task in tasks:
        partition = int(task.split("_")[1])
        if task not in lines:  # the checkpoint was already at the end: nothing to restore
            assert w0.metric("segue_task_restored_records_total", task=task, store="counts") in (
                None,
                0.0,
            )
            continue
        start, end, restored = lines[task]
        assert start == checkpoints[task]
        assert restored == committed_records(
            kafka.bootstrap_servers, changelog, partition, start, end
        )
        # Only the tail: far less than the whole changelog.
        assert restored < committed_records(kafka.bootstrap_servers, changelog, partition, 0, end)


def test_restart_after_failover_restores_only_the_tail(
    kafka: Any, spawn: Any, assign: Any, tmp_path: Path
) -> None:
    """w0 dies; w1 takes over and writes more changelog; w0 comes back with its old
    state directory (static membership) and restores exactly what w1 wrote since
    w0's checkpoint, not the whole changelog."""
    app_id, source, output, args = _setup(kafka)
    tasks = ["0_0", "0_1"]
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": tasks}, "w1": {}})
    state = tmp_path / "w0-state"
    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w1 = spawn("segue.worker.apps.tally:topology", "w1", configmap, app_args=args)
    w0.wait_ready()
    producer = SteadyProducer(kafka.bootstrap_servers, source, 2, keys=40, rate=1500)
    producer.start()
    w0.wait_for(
        "1500 records processed",
        lambda: (
            sum(w0.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 1500
        ),
    )
    time.sleep(DURABLE)
    w0.kill()
    checkpoints = _local_checkpoints(state, app_id, tasks)

    assign(configmap, app_id, 2, {"w0": {}, "w1": {"active": tasks}})
    w1.wait_generation(2)
    w1.wait_ready()
    w1.wait_for(
        "w1 processes",
        lambda: (
            sum(w1.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 1500
        ),
    )

    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_generation(2)
    # Not assigned, but its state is on disk: reported for the operator's lag math.
    for task in tasks:
        assert w0.metric("segue_task_local_offset", task=task, store="counts") == checkpoints[task]
    assign(configmap, app_id, 3, {"w0": {"active": tasks}, "w1": {}})
    w0.wait_generation(3)
    w0.wait_ready()
    produced = producer.stop()
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= produced)
    check_exact(records, producer.sent)

    changelog = f"{app_id}-counts-changelog"
    lines = restored_lines(w0.log())
    for task in tasks:
        partition = int(task.split("_")[1])
        start, end, restored = lines[task]
        assert start == checkpoints[task]
        tail, tail_bytes = committed(kafka.bootstrap_servers, changelog, partition, start, end)
        whole = committed_records(kafka.bootstrap_servers, changelog, partition, 0, end)
        assert restored == tail
        assert 0 < tail < whole
        assert w0.metric("segue_task_restored_records_total", task=task, store="counts") == tail
        # the bytes it read from the changelog, counted as a consumer of it counts them
        assert w0.metric("segue_task_restored_bytes_total", task=task, store="counts") == tail_bytes
