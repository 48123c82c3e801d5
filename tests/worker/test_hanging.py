"""A task whose changelog a transaction still holds after the fence is not started.

After a task's fence nothing of its own is left open on its changelog partitions,
so a last stable offset below the high watermark there means a transaction nobody
will end: one Kafka left hanging (docs/reliability.md, "A transaction committed
while the only broker stops"), or another producer writing where it should not.
Restoring up to that offset would start the task on a changelog that stops short of
records its input offsets may already include. ``fencing.fence_all`` refuses it
instead (``hanging.TransactionHanging``, a retried start failure naming the
partition) and starts the rest of the batch as usual; once the transaction ends,
the retry starts it.

The hanging transaction Kafka makes is a race inside the broker's controlled
shutdown (``python -m bench.hanging.run`` reproduces it, not reliably enough for a
test), so here a transaction of another transactional id, left open on one task's
changelog, holds it the same way: the broker sees no difference.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from segue.protocol.reports import TaskErrorReason
from segue.worker.failures import failure_of
from segue.worker.fencing import Fenced, Starting, fence_all
from segue.worker.hanging import TransactionHanging
from segue.worker.kafka import Admin, committed_offsets, input_consumer_config, producer_config
from tests.operator.e2e import wait_for

from .harness import create_topics

pytestmark = pytest.mark.worker


def _answers(consumer: Consumer, partitions: list[tuple[str, int]]) -> bool:
    try:
        committed_offsets(consumer, partitions, timeout=5)
    except KafkaException:
        return False
    return True


def test_a_task_an_open_transaction_holds_is_not_started_until_it_ends(kafka: Any) -> None:
    bootstrap, app = kafka.bootstrap_servers, f"hang-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, {f"{app}-in": 2, f"{app}-cl": 2})
    admin = Admin(bootstrap, {})
    restorer = Consumer(input_consumer_config(bootstrap, f"{app}-restore", {}))
    consumer = Consumer(input_consumer_config(bootstrap, app, {}))

    def watermarks(topic: str, partition: int) -> tuple[int, int]:
        low, high = restorer.get_watermark_offsets(TopicPartition(topic, partition), 10, False)
        return int(low), int(high)

    def start(tasks: list[int]) -> list[Fenced | BaseException]:
        return fence_all(
            [
                Starting(f"0_{i}", None, {"counts": (f"{app}-cl", i)}, [(f"{app}-in", i)], [])
                for i in tasks
            ],
            factory=lambda task: Producer(producer_config(bootstrap, f"{app}-{task}", {})),
            exactly_once=True,
            watermarks=watermarks,
            consumer=consumer,
            highs=admin.high_watermarks,
        )

    other = Producer(producer_config(bootstrap, f"other-{app}", {}))
    try:
        wait_for(  # a new group's coordinator takes a moment to be ready
            "the group coordinator",
            lambda: _answers(consumer, [(f"{app}-in", 0), (f"{app}-in", 1)]),
            30,
            lambda: "",
        )
        for i, outcome in enumerate(start([0, 1])):  # both commit once: state and offsets
            assert isinstance(outcome, Fenced), outcome
            outcome.producer.begin_transaction()
            outcome.producer.produce(f"{app}-cl", b"1", key=b"word", partition=i)
            offsets = [TopicPartition(f"{app}-in", i, 7)]
            group = consumer.consumer_group_metadata()
            outcome.producer.send_offsets_to_transaction(offsets, group, 10)
            outcome.producer.commit_transaction(10)
        other.init_transactions(30)
        other.begin_transaction()
        other.produce(f"{app}-cl", b"9", key=b"word", partition=1)
        other.flush(10)  # written, never committed: changelog 1 is held from here

        first, second = start([0, 1])
        assert isinstance(first, Fenced), first
        assert first.offsets == {(f"{app}-in", 0): 7}
        assert isinstance(second, TransactionHanging), second
        assert f"changelog {app}-cl[1] has a transaction open at offset 2" in str(second)
        assert failure_of(second, TaskErrorReason.START_FAILED).retry

        other.commit_transaction(10)  # the cause ends
        (again,) = start([1])
        assert isinstance(again, Fenced), again
        assert again.ends == {"counts": admin.high_watermarks([(f"{app}-cl", 1)])[(f"{app}-cl", 1)]}
        assert again.offsets == {(f"{app}-in", 1): 7}
    finally:
        restorer.close()
        consumer.close()
