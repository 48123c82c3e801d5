"""WordCount end to end on the real broker: two workers, a repartition step
between them, exact counts, offsets committed under the application's group."""

from __future__ import annotations

import random
import re
import struct
import time
import uuid
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from .harness import create_topics, open_transactions, produce, read_committed

pytestmark = pytest.mark.worker

WORDS = ["kafka", "stream", "segue", "learner", "standby", "task", "store", "pod"]


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
def test_wordcount_counts_exactly_across_two_workers(
    kafka: Any, spawn: Any, assign: Any, guarantee: str
) -> None:
    """With no failure, at-least-once is exact too; exactly-once is also exact
    across failures (test_recovery, test_fencing, test_handover)."""
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"wc-{tag}", f"text-{tag}", f"counts-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 3, output: 3})
    configmap = f"{app_id}-assignment"
    assign(
        configmap,
        app_id,
        1,
        {
            "w0": {"active": ["0_0", "0_1", "1_0"]},
            "w1": {"active": ["0_2", "1_1", "1_2"]},
        },
    )
    args = {"application_id": app_id, "input": source, "output": output}
    workers = [
        spawn(
            "segue.worker.apps.wordcount:topology",
            m,
            configmap,
            app_args=args,
            extra=["--processing-guarantee", guarantee],
        )
        for m in ("w0", "w1")
    ]
    for w in workers:
        w.wait_ready()

    rng = random.Random(4)
    lines = [
        " ".join(
            rng.choice(WORDS).upper() if rng.random() < 0.1 else rng.choice(WORDS)
            for _ in range(rng.randint(1, 12))
        )
        + "."
        for _ in range(600)
    ]
    produce(kafka.bootstrap_servers, source, [(None, line) for line in lines])
    expected = Counter(w for line in lines for w in re.split(r"\W+", line.lower()) if w)
    total = sum(expected.values())

    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total)
    history: dict[str, list[int]] = {}
    for _, _, key, value in records:
        history.setdefault(key.decode(), []).append(struct.unpack(">q", value)[0])
    # Exactly once: per word the committed counts are 1, 2, ..., n, in order.
    assert {w: h for w, h in history.items()} == {
        w: list(range(1, n + 1)) for w, n in expected.items()
    }
    assert len(records) == total
    # Idle now: no transaction stays open (each commits within the commit interval).
    internal = {f"{app_id}-counts-store-repartition": 3, f"{app_id}-counts-store-changelog": 3}
    deadline = time.monotonic() + 10
    while open_transactions(kafka.bootstrap_servers, {output: 3, **internal}):
        assert time.monotonic() < deadline, "a transaction stayed open while idle"
        time.sleep(0.2)

    # Input offsets are committed under the application id, for standard lag tools.
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": app_id})
    try:
        committed = consumer.committed([TopicPartition(source, p) for p in range(3)], timeout=30)
        ends = [
            consumer.get_watermark_offsets(TopicPartition(source, p), timeout=10)[1]
            for p in range(3)
        ]
    finally:
        consumer.close()
    # A partition that never had a record has nothing to commit (OFFSET_INVALID);
    # every other one is committed to its end.
    assert [
        tp.offset if end else max(tp.offset, 0) for tp, end in zip(committed, ends, strict=True)
    ] == ends
    processed = sum(
        w.metric("segue_task_records_processed_total", task=f"0_{p}") or 0
        for w in workers
        for p in range(3)
    )
    assert processed == len(lines)
