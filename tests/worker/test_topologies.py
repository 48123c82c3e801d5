"""The windowed example and partition expansion (seed 004), end to end."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions

from .harness import create_topics, produce, read_committed
from .scenarios import check_exact

pytestmark = pytest.mark.worker

MINUTE = 60_000


def test_windowed_aggregation_counts_sums_and_drops_late_records(
    kafka: Any, spawn: Any, assign: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"win-{tag}", f"amounts-{tag}", f"totals-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 1, output: 1})
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": ["0_0"]}})
    args = {
        "application_id": app_id,
        "input": source,
        "output": output,
        "size_ms": str(MINUTE),
        "grace_ms": "10000",
    }
    w0 = spawn("segue.worker.apps.windowed:topology", "w0", configmap, app_args=args)
    w0.wait_ready()
    w0_start = 1_700_000_040_000 - 1_700_000_040_000 % MINUTE
    events = [  # (key, seconds into window 0, amount)
        ("a", 1, 1),
        ("a", 2, 2),
        ("b", 3, 5),
        ("a", 61, 10),  # window 1; stream time 61 s
        ("a", 5, 100),  # out of order, within grace (window 0 closes at 70 s)
        ("b", 71, 1),  # stream time 71 s: window 0 is closed
        ("a", 6, 1000),  # late: dropped
    ]
    for key, second, amount in events:
        produce(
            kafka.bootstrap_servers,
            source,
            [(key, json.dumps(amount))],
            timestamp=w0_start + second * 1000,
        )
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 6)
    w0.wait_for(
        "all input processed",
        lambda: w0.metric("segue_task_records_processed_total", task="0_0") == 7,
    )
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 6, timeout=5)
    assert len(records) == 6
    last = {k.decode(): json.loads(v) for _, _, k, v in records}
    w1_start = w0_start + MINUTE
    assert {k: (v["count"], v["sum"]) for k, v in last.items()} == {
        f"a@{w0_start}": (3, 103),
        f"b@{w0_start}": (1, 5),
        f"a@{w1_start}": (1, 10),
        f"b@{w1_start}": (1, 1),
    }


def test_partition_expansion_keeps_keys_on_their_task(kafka: Any, spawn: Any, assign: Any) -> None:
    """After the source grows from 2 to 4 partitions, task 0_0 reads partitions 0
    and 2 (p mod 2 == 0): a key written to partition 0 before and to partition 2
    after keeps counting in the same store."""
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 2})
    configmap = f"{app_id}-assignment"
    tasks = ["0_0", "0_1"]
    assign(configmap, app_id, 1, {"w0": {"active": tasks}})
    args = {"application_id": app_id, "input": source, "output": output}
    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args)
    w0.wait_ready()
    produce(kafka.bootstrap_servers, source, [("a", "x")] * 3, partition=0)
    produce(kafka.bootstrap_servers, source, [("b", "x")] * 2, partition=1)
    read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 5)

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    admin.create_partitions([NewPartitions(source, 4)])[source].result(timeout=30)
    produce(kafka.bootstrap_servers, source, [("a", "x")] * 4, partition=2)
    produce(kafka.bootstrap_servers, source, [("b", "x")] * 1, partition=3)
    assign(
        configmap,
        app_id,
        2,
        {"w0": {"active": tasks}},
        partition_map={"0": {"initial_partitions": 2, "current_partitions": 4}},
    )
    w0.wait_generation(2)
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 10)
    check_exact(records, {"a": 7, "b": 3})
    w0.wait_for(
        "processed per task",
        lambda: (
            (
                w0.metric("segue_task_records_processed_total", task="0_0"),
                w0.metric("segue_task_records_processed_total", task="0_1"),
            )
            == (7.0, 3.0)
        ),
    )
