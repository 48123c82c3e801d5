"""The local broker is a real Kafka: topics, produce/consume, transactions, fencing."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from segue.stack import KafkaBroker

pytestmark = pytest.mark.smoke


def create_topic(kafka: KafkaBroker, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    futures[name].result(timeout=30)


def read_all(
    kafka: KafkaBroker, topic: str, isolation: str, expected_at_least: int = 0
) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"{topic}-reader-{isolation}",
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    idle = 0
    while idle < 5 or len(values) < expected_at_least:
        msg = consumer.poll(1.0)
        if msg is None:
            idle += 1
            if idle > 30:
                break
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise KafkaException(msg.error())
        values.append(msg.value())
    consumer.close()
    return values


def test_topic_produce_consume(kafka: KafkaBroker, topic_name: str) -> None:
    create_topic(kafka, topic_name, partitions=3)
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    assert len(admin.list_topics(topic_name, timeout=10).topics[topic_name].partitions) == 3

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "enable.idempotence": True})
    for i in range(100):
        producer.produce(topic_name, key=b"k", value=str(i).encode())
    assert producer.flush(30) == 0
    # One key, one partition: all 100 in order.
    partition = next(
        p
        for p in range(3)
        if Consumer(
            {"bootstrap.servers": kafka.bootstrap_servers, "group.id": "w"}
        ).get_watermark_offsets(TopicPartition(topic_name, p), timeout=10)[1]
        > 0
    )
    consumer = Consumer(
        {"bootstrap.servers": kafka.bootstrap_servers, "group.id": f"{topic_name}-g"}
    )
    consumer.assign([TopicPartition(topic_name, partition, 0)])
    got = []
    while len(got) < 100:
        msg = consumer.poll(10)
        assert msg is not None, f"only {len(got)} of 100 records came back"
        assert msg.error() is None
        got.append(int(msg.value()))
    consumer.close()
    assert got == list(range(100))


def test_transactions_commit_abort_and_read_committed(kafka: KafkaBroker, topic_name: str) -> None:
    create_topic(kafka, topic_name)
    producer = Producer(
        {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"{topic_name}-tx"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic_name, value=b"committed-1")
    producer.produce(topic_name, value=b"committed-2")
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic_name, value=b"aborted")
    producer.flush(30)
    producer.abort_transaction(30)

    assert read_all(kafka, topic_name, "read_committed", 2) == [b"committed-1", b"committed-2"]
    # The aborted record is in the log: read_uncommitted sees it.
    assert b"aborted" in read_all(kafka, topic_name, "read_uncommitted", 3)


def test_stale_transactional_producer_is_fenced(kafka: KafkaBroker, topic_name: str) -> None:
    create_topic(kafka, topic_name)
    config = {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"{topic_name}-t"}
    old = Producer(config)
    old.init_transactions(30)
    old.begin_transaction()
    old.produce(topic_name, value=b"from-old")

    new = Producer(config)  # same transactional.id: bumps the epoch, fences `old`
    new.init_transactions(30)

    with pytest.raises(KafkaException) as fenced:
        old.commit_transaction(30)
    assert fenced.value.args[0].fatal() or fenced.value.args[0].code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )
    new.begin_transaction()
    new.produce(topic_name, value=b"from-new")
    new.commit_transaction(30)
    assert read_all(kafka, topic_name, "read_committed", 1) == [b"from-new"]
