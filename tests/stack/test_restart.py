"""The local stack restarts its parts in place: the fault suite's broker restart
and API-server restart need exactly this.

Each test runs its own broker or control plane (the stack allows several), so the
session's shared ones are never taken down under the tests that follow. Real
processes only; each restart is timed and printed (``pytest -s`` shows it).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from segue.stack import KafkaBroker, KubeControlPlane
from segue.stack.paths import Binaries

pytestmark = pytest.mark.smoke

RESTART_BOUND = 90.0  # seconds; generous on 2 busy cores (measured: docs/reliability.md)
STOP_BOUND = 10.0  # the apiserver's stop: SIGTERM, SIGKILL after a 3 s grace


@pytest.fixture
def plane(tmp_path: Path, binaries: Binaries) -> Iterator[KubeControlPlane]:
    own = KubeControlPlane(tmp_path / "kube", binaries)
    try:
        own.start()
        yield own
    finally:
        own.stop()


def _produce(bootstrap: str, topic: str, values: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in values:
        producer.produce(topic, value=str(i).encode())
    assert producer.flush(60) == 0


def _read_all(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> list[int]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[int] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                assert msg.error() is None, msg.error()
                values.append(int(msg.value()))
    finally:
        consumer.close()
    return values


def test_broker_restarts_on_its_own_data(broker: KafkaBroker) -> None:
    topic = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    _produce(broker.bootstrap_servers, topic, range(1000))
    cluster_id = broker.cluster_id
    address = broker.bootstrap_servers

    seconds = broker.restart()
    print(f"\nKafka broker restart (stop + start on the same data): {seconds:.1f}s")

    assert seconds < RESTART_BOUND
    assert broker.bootstrap_servers == address
    assert broker.formatted_cluster_id() == cluster_id == broker.cluster_id
    _produce(broker.bootstrap_servers, topic, range(1000, 1500))
    assert _read_all(broker.bootstrap_servers, topic, 1500) == list(range(1500))


def test_broker_starts_again_on_its_own_data_after_a_crash(broker: KafkaBroker) -> None:
    """SIGKILL, no controlled shutdown (``KafkaBroker.crash``): the next start recovers
    the log and serves every record it had acknowledged."""
    topic = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    _produce(broker.bootstrap_servers, topic, range(1000))
    began = time.monotonic()
    broker.crash()
    assert not broker.running
    broker.start()
    print(f"\nKafka broker crash + start on the same data: {time.monotonic() - began:.1f}s")
    _produce(broker.bootstrap_servers, topic, range(1000, 1500))
    assert _read_all(broker.bootstrap_servers, topic, 1500) == list(range(1500))


def test_apiserver_restarts_on_the_same_etcd(plane: KubeControlPlane) -> None:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(plane.kubeconfig))
    core = client.CoreV1Api(api)
    name = f"cm-{uuid.uuid4().hex[:8]}"
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"k": "v"})
    core.create_namespaced_config_map("default", body)

    began = time.monotonic()
    plane.stop_apiserver()
    stopped = time.monotonic() - began
    assert plane.apiserver is not None
    assert not plane.apiserver.running
    plane.start_apiserver()
    seconds = time.monotonic() - began
    print(f"\nkube-apiserver stop: {stopped:.1f}s; stop + start on the same etcd: {seconds:.1f}s")

    assert stopped < STOP_BOUND
    assert seconds < RESTART_BOUND
    assert core.read_namespaced_config_map(name, "default").data == {"k": "v"}
    core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"{name}-after"))
    )
    names = {cm.metadata.name for cm in core.list_namespaced_config_map("default").items}
    assert {name, f"{name}-after"} <= names
    api.close()
