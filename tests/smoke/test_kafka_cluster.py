"""The three-broker stack is a replicated Kafka cluster: every topic Segue, the apps and
Kafka itself create gets three replicas and ``min.insync.replicas`` 2, so writes and
transactions go on with one broker down and a broker that comes back catches up."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from segue.operator.observe import KafkaView
from segue.stack import KafkaCluster

pytestmark = pytest.mark.smoke


def replicas(admin: AdminClient, topic: str) -> dict[int, tuple[list[int], list[int]]]:
    """partition -> (replicas, in-sync replicas)."""
    found = admin.list_topics(topic, timeout=10).topics[topic]
    assert found.error is None, found.error
    return {p.id: (sorted(p.replicas), sorted(p.isrs)) for p in found.partitions.values()}


def known(admin: AdminClient, topic: str, timeout: float = 30.0) -> None:
    """Wait until the broker that answers metadata knows ``topic``: a created topic
    reaches each broker's metadata a moment after the controller commits it (a CI run
    read "Unknown topic or partition" right after the create returned)."""
    deadline = time.monotonic() + timeout
    while admin.list_topics(topic, timeout=10).topics[topic].error is not None:
        assert time.monotonic() < deadline, f"{topic} unknown {timeout:.0f}s after its creation"
        time.sleep(0.2)


def min_isr(admin: AdminClient, topic: str) -> str:
    (future,) = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values()
    return str(future.result(timeout=10)["min.insync.replicas"].value)


def commit_transaction(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex[:6]}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, value=v, partition=0)
    producer.commit_transaction(30)


def read_committed(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(values) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
    consumer.commit(asynchronous=False)  # a group's offsets: __consumer_offsets
    consumer.close()
    return values


def test_three_brokers_replicate_every_topic_and_survive_one_down(
    three_brokers: KafkaCluster,
) -> None:
    cluster = three_brokers
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    assert sorted(admin.list_topics(timeout=10).brokers) == [1, 2, 3]
    topic = f"replicated-{uuid.uuid4().hex[:6]}"
    # no replication factor given: the cluster's default, as the worker creates changelogs
    admin.create_topics([NewTopic(topic, num_partitions=3)])[topic].result(timeout=30)
    known(admin, topic)
    assert all(r == [1, 2, 3] for r, _ in replicas(admin, topic).values())
    assert min_isr(admin, topic) == "2"

    commit_transaction(bootstrap, topic, [b"a", b"b"])
    assert read_committed(bootstrap, topic, 2) == [b"a", b"b"]
    for internal in ("__consumer_offsets", "__transaction_state"):
        assert all(r == [1, 2, 3] for r, _ in replicas(admin, internal).values()), internal
    assert min_isr(admin, "__transaction_state") == "2"

    # the leader of partition 0 stops (controlled shutdown): writes and transactions go on
    leader = admin.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
    cluster.node(leader).stop()
    commit_transaction(bootstrap, topic, [b"c"])
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    producer.produce(topic, value=b"d", partition=0)
    assert producer.flush(30) == 0
    assert read_committed(bootstrap, topic, 4) == [b"a", b"b", b"c", b"d"]
    assert leader not in replicas(admin, topic)[0][1]  # out of the ISR while down
    with KafkaView(bootstrap, {}) as view:  # what the operator reads: KafkaReplicated
        _, seen = view.layout([topic])
    assert leader not in seen.brokers
    assert seen.under_replicated == {(topic, p): (leader,) for p in range(3)}
    assert seen.offline == ()

    cluster.node(leader).start()  # back on its data: it catches up and rejoins the ISR
    deadline = time.monotonic() + 60
    while replicas(admin, topic)[0][1] != [1, 2, 3] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert replicas(admin, topic)[0][1] == [1, 2, 3]
