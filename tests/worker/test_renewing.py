"""A long-lived consumer librdkafka has left with no broker is replaced in place
(segue.worker.renewing): the statistics tell a lost client from a healthy one, and the
new client carries on where the old one was, on a real broker.

The loss itself (a just-restarted KRaft broker answering Metadata with no broker,
confluentinc/librdkafka#5301) happens in a moment of a broker's restart that a test
cannot hold open; tests/faults/test_restart.py meets it when it comes.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from segue.worker.renewing import Renewing, cluster_lost, no_usable_broker, renew_stranded

pytestmark = pytest.mark.worker

# The "brokers" of librdkafka's statistics, as a healthy consumer reports them
# (its bootstrap entry gone once the first Metadata named the broker) and as one
# reports them after a Metadata answer with no broker decommissioned them all.
HEALTHY = {
    "127.0.0.1:9092/1": {"source": "learned", "nodeid": 1, "state": "UP"},
    "GroupCoordinator": {"source": "logical", "nodeid": -1, "state": "UP"},
}
BOOTSTRAPPING = {"127.0.0.1:9092/bootstrap": {"source": "configured", "nodeid": -1}}
LOST = {"GroupCoordinator": {"source": "logical", "nodeid": -1, "state": "UP"}}


@pytest.mark.parametrize(
    ("brokers", "lost"),
    [(HEALTHY, False), (BOOTSTRAPPING, False), (LOST, True), ({}, True)],
    ids=["learned", "bootstrapping", "logical-only", "none"],
)
def test_a_client_is_lost_when_its_statistics_name_no_broker(
    brokers: dict[str, Any], lost: bool
) -> None:
    assert cluster_lost({"brokers": brokers}) is lost


def test_no_usable_broker_is_told_from_other_failures() -> None:
    stranded = KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata"))
    assert no_usable_broker(stranded)
    assert not no_usable_broker(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    assert not no_usable_broker(KafkaException("no error object"))
    assert renew_stranded(object(), "not a Renewing") is False


def _records(consumer: Renewing, count: int, timeout: float = 30) -> list[tuple[int, int]]:
    """(partition, offset) of the next ``count`` records."""
    got: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        for message in consumer.consume(count - len(got), 0.5):
            assert message.error() is None, message.error()
            got.append((message.partition(), message.offset()))
    assert len(got) == count, f"only {got} within {timeout}s"
    return got


def test_a_renewed_consumer_goes_on_from_the_positions_and_pauses(kafka: Any) -> None:
    topic = f"renew-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(10):
        producer.produce(topic, value=b"%d" % i, partition=i % 2)
    assert producer.flush(30) == 0
    renewed: list[str] = []
    config = {"bootstrap.servers": kafka.bootstrap_servers, "group.id": topic}
    consumer = Renewing("input", config, renewed=renewed.append)
    try:
        consumer.incremental_assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 2)])
        consumer.pause([TopicPartition(topic, 1)])
        assert _records(consumer, 3) == [(0, 0), (0, 1), (0, 2)]
        # statistics every second, served by consume(): a healthy client is never lost
        consumer.pause([TopicPartition(topic, 0)])
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            assert consumer.consume(1, 0.2) == []
        assert consumer.statistics >= 2
        assert consumer.lost_for() is None
        consumer.resume([TopicPartition(topic, 0)])
        assert consumer.renew_if_lost() is False
        consumer.renew("a test's")
        assert renewed == ["input"]
        # p0 resumes at the next record, p1 stays paused, then starts where it was assigned
        assert _records(consumer, 2) == [(0, 3), (0, 4)]
        assert consumer.consume(1, 1.0) == [], "the paused partition was not kept paused"
        consumer.resume([TopicPartition(topic, 1)])
        assert _records(consumer, 3) == [(1, 2), (1, 3), (1, 4)]
        assert {(p.topic, p.partition) for p in consumer.assignment()} == {(topic, 0), (topic, 1)}
    finally:
        consumer.close()
