"""``segue.operator.observe.kafka``: partition counts and last stable offsets,
asked of the session's real broker."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic, OffsetSpec

from segue.operator.observe import KafkaObserveError, KafkaView
from segue.operator.scaling import Replication
from segue.stack.process import free_port

T = TypeVar("T")


def create(bootstrap: str, topics: dict[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = [NewTopic(name, num_partitions=n, replication_factor=-1) for name, n in topics.items()]
    for future in admin.create_topics(new).values():
        future.result(timeout=30)
    # The controller answers before every broker's metadata cache has the topics: wait
    # until a fresh client sees them, so the tests start from topics that exist.
    deadline = time.monotonic() + 30
    while any(
        admin.list_topics(topic=name, timeout=10).topics[name].error is not None for name in topics
    ):
        assert time.monotonic() < deadline, f"topics {sorted(topics)} never appeared"
        time.sleep(0.1)


def eventually(read: Callable[[], T], expected: T, timeout: float = 30.0) -> None:
    """Metadata and transaction markers reach the broker's answers a moment after
    the call that caused them returns, and a new partition's leader a moment after
    that (meanwhile KafkaView says so: "Not leader for partition"); poll until then."""
    deadline = time.monotonic() + timeout
    last: T | KafkaObserveError | None = None
    while time.monotonic() < deadline:
        try:
            last = read()
        except KafkaObserveError as exc:
            last = exc
        if last == expected:
            return
        time.sleep(0.1)
    raise AssertionError(f"expected {expected!r}, still {last!r} after {timeout}s")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def view(kafka: Any) -> Iterator[KafkaView]:
    with KafkaView(kafka.bootstrap_servers, {"client.id": "segue-observe-test"}) as v:
        yield v


def test_partitions_of_the_topics_that_exist(kafka: Any, view: KafkaView) -> None:
    three, one, missing = unique("three"), unique("one"), unique("missing")
    create(kafka.bootstrap_servers, {three: 3, one: 1})
    assert view.partitions([three, one, missing]) == {three: 3, one: 1}
    assert view.partitions(iter([missing])) == {}
    assert view.partitions([]) == {}
    assert view.topic_exists(three)
    assert not view.topic_exists(missing)


def test_the_layout_says_how_the_topics_are_replicated(kafka: Any, view: KafkaView) -> None:
    three, missing = unique("three"), unique("missing")
    create(kafka.bootstrap_servers, {three: 3})
    counts, replication = view.layout([three, missing])
    assert counts == {three: 3}
    assert replication == Replication(brokers=(1,), partitions=3)  # one broker: all in sync


def test_partition_growth_is_seen(kafka: Any, view: KafkaView) -> None:
    topic = unique("grows")
    create(kafka.bootstrap_servers, {topic: 2})
    assert view.partitions([topic]) == {topic: 2}
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for future in admin.create_partitions([NewPartitions(topic, 5)]).values():
        future.result(timeout=30)
    eventually(lambda: view.partitions([topic]), {topic: 5})
    eventually(lambda: view.end_offsets({topic: 5}), {(topic, p): 0 for p in range(5)})


def high_watermarks(bootstrap: str, topic: str, n: int) -> dict[tuple[str, int], int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(n)}
    futures = admin.list_offsets(request, isolation_level=IsolationLevel.READ_UNCOMMITTED)
    return {(tp.topic, tp.partition): f.result(timeout=30).offset for tp, f in futures.items()}


def test_end_offsets_stop_at_an_open_transaction(kafka: Any, view: KafkaView) -> None:
    bootstrap = kafka.bootstrap_servers
    topic = unique("txn")
    create(bootstrap, {topic: 2})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("observe")})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic, key=b"k", value=str(i).encode(), partition=0)
    producer.commit_transaction(30)
    # five records (offsets 0-4) and the commit marker (5)
    eventually(lambda: view.end_offsets({topic: 2}), {(topic, 0): 6, (topic, 1): 0})

    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, value=str(i).encode(), partition=0)
    for i in range(2):
        producer.produce(topic, value=str(i).encode(), partition=1)
    assert producer.flush(30) == 0
    try:
        # The records are written (the high watermark moved) but not committed:
        # the last stable offset stays at the open transaction's first record.
        eventually(lambda: high_watermarks(bootstrap, topic, 2), {(topic, 0): 9, (topic, 1): 2})
        assert view.end_offsets({topic: 2}) == {(topic, 0): 6, (topic, 1): 0}
    finally:
        producer.commit_transaction(30)
    # now past the three records and their marker, and the two records and theirs
    eventually(lambda: view.end_offsets({topic: 2}), {(topic, 0): 10, (topic, 1): 3})
    assert view.end_offsets({topic: 1}) == {(topic, 0): 10}
    assert view.end_offsets({}) == {}
    assert view.end_offsets({topic: 0}) == {}


def test_end_offsets_of_partitions_that_do_not_exist(kafka: Any, view: KafkaView) -> None:
    topic, missing = unique("two"), unique("missing")
    create(kafka.bootstrap_servers, {topic: 2})
    # A new partition's broker can answer "not leader" for a moment after the topic
    # shows in metadata; the view asks again until it answers (LEADER_WAIT).
    assert view.end_offsets({topic: 2}) == {(topic, 0): 0, (topic, 1): 0}
    with pytest.raises(KafkaObserveError, match=rf"{missing}\[0\]"):
        view.end_offsets({missing: 1})
    with pytest.raises(KafkaObserveError, match=rf"{topic}\[2\]") as caught:
        view.end_offsets({topic: 3})
    assert f"{topic}[0]" not in str(caught.value)  # only the failed partition is named


def test_settings_and_closing(kafka: Any) -> None:
    with pytest.raises(KafkaObserveError, match=r"no\.such\.property"):
        KafkaView(kafka.bootstrap_servers, {"no.such.property": "1"})
    view = KafkaView(kafka.bootstrap_servers)
    topic = unique("closing")
    create(kafka.bootstrap_servers, {topic: 1})
    assert view.partitions([topic]) == {topic: 1}
    view.close()
    with pytest.raises(KafkaObserveError, match="closed"):
        view.partitions([topic])


def test_an_unreachable_broker_raises() -> None:
    port = free_port("127.0.0.1")  # nothing listens there
    view = KafkaView(f"127.0.0.1:{port}", timeout=1.0)
    try:
        with pytest.raises(KafkaObserveError, match="metadata for"):
            view.partitions(["anything"])
        with pytest.raises(KafkaObserveError, match=r"anything\[0\]"):
            view.end_offsets({"anything": 1})
    finally:
        # Released here, on this thread: the raises' tracebacks hold this frame in a
        # cycle, and the garbage collector once freed the client from one of
        # librdkafka's own threads, which aborts the process ("rd_kafka_destroy()
        # called from librdkafka owned thread").
        view.close()


def test_log_ends_committed_and_start_offsets_for_the_signal(kafka: Any, view: KafkaView) -> None:
    """The autoscaling signal's reads: the high watermark counts records of an open
    transaction (input written, not yet readable), the group's committed offsets name
    only the partitions it committed, and the log start is where it would begin."""
    bootstrap = kafka.bootstrap_servers
    topic, group = unique("signal"), unique("app")
    create(bootstrap, {topic: 2})
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        plain.produce(topic, value=str(i).encode(), partition=0)
    assert plain.flush(30) == 0
    eventually(lambda: view.log_end_offsets({topic: 2}), {(topic, 0): 10, (topic, 1): 0})
    assert view.committed_offsets(group, {topic: 2}) == {}

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    finally:
        consumer.close()
    eventually(lambda: view.committed_offsets(group, {topic: 2}), {(topic, 0): 4})
    assert view.log_start_offsets({topic: 2}) == {(topic, 0): 0, (topic, 1): 0}

    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("signal")})
    txn.init_transactions(30)
    txn.begin_transaction()
    for i in range(3):
        txn.produce(topic, value=str(i).encode(), partition=1)
    assert txn.flush(30) == 0
    try:
        eventually(lambda: view.log_end_offsets({topic: 2}), {(topic, 0): 10, (topic, 1): 3})
        assert view.end_offsets({topic: 2}) == {(topic, 0): 10, (topic, 1): 0}
    finally:
        txn.abort_transaction(30)
    assert view.log_end_offsets({}) == {}
    assert view.committed_offsets(group, {}) == {}
