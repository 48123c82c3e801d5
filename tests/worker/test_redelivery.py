"""A record its consumer delivers again to the same active instance (a client
refetching after a leader change) is dropped, not processed twice: its output is in
a transaction already. On a real broker, with the worker's own clients."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition

from segue.worker.active import ActiveTask
from segue.worker.apps.wordcount import topology
from segue.worker.kafka import committed_offsets, input_consumer_config, producer_config

from .harness import create_topics, produce, read_committed

pytestmark = pytest.mark.worker


def fetched(consumer: Consumer, n: int, timeout: float = 30.0) -> list[Message]:
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        assert time.monotonic() < deadline, f"{len(out)} of {n} records fetched"
        out += [m for m in consumer.consume(n - len(out), 0.5) if m.error() is None]
    return out


def test_a_record_delivered_again_is_dropped_and_said_once_per_burst(
    kafka: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source = f"wc-{tag}", f"text-{tag}"
    app = topology(app_id, source, f"out-{tag}")
    words = f"{app_id}-counts-store-repartition"
    create_topics(kafka.bootstrap_servers, {source: 1, words: 1})
    produce(kafka.bootstrap_servers, source, [("1", "a"), ("2", "b"), ("3", "c")])
    consumer = Consumer(input_consumer_config(kafka.bootstrap_servers, app_id, {}))
    consumer.assign([TopicPartition(source, 0, 0)])
    producer = Producer(producer_config(kafka.bootstrap_servers, f"{app_id}-0_0", {}))
    producer.init_transactions(30)
    task = ActiveTask(
        "0_0", app.get(0), application_id=app_id, member="m", producer=producer, stores={},
        consumer=consumer,
    )  # fmt: skip
    a, b, c = fetched(consumer, 3)

    with caplog.at_level(logging.WARNING, logger="segue.worker.active"):
        for msg in (a, b, a, b, c, b):  # a and b again in one burst, then b once more
            task.process(msg)
        task.commit()

    assert (task.processed, task.redelivered) == (3, 3)
    said = [r.getMessage() for r in caplog.records if "delivered again" in r.getMessage()]
    assert said == [
        f"task 0_0: {source}[0]@0 delivered again (the task is at 2): dropped, and any "
        "more of it below 2",
        f"task 0_0: {source}[0]@1 delivered again (the task is at 3): dropped, and any "
        "more of it below 3",
    ]
    records = read_committed(kafka.bootstrap_servers, words, lambda r: len(r) >= 3, 30)
    assert sorted(r[2] for r in records) == [b"a", b"b", b"c"]
    # and nothing else: three records and the commit's marker
    assert consumer.get_watermark_offsets(TopicPartition(words, 0), 10) == (0, 4)
    assert committed_offsets(consumer, [(source, 0)]) == {(source, 0): 3}
    producer.close()
    consumer.close()
