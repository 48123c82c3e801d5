"""Test harness for the worker: topics, assignments, worker processes, output.

Workers run as real subprocesses (``python -m segue worker``) so tests can kill
them with SIGKILL or stop them with SIGTERM; assignments are real ConfigMaps on
the real API server; output is read back read_committed, as a downstream
consumer of an exactly-once application would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, IsolationLevel, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec
from prometheus_client.parser import text_string_to_metric_families

from segue.protocol import AssignmentDocument, MemberRoles, encode
from segue.protocol.document import configmap_data
from segue.protocol.names import MANAGED_BY, MANAGER
from segue.stack.process import free_port
from tests.timing import note_wait

ROOT = Path(__file__).resolve().parents[2]


def create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = [NewTopic(name, num_partitions=n, replication_factor=-1) for name, n in topics.items()]
    for future in admin.create_topics(new).values():
        future.result(timeout=30)


def produce(bootstrap: str, topic: str, records: Iterable[tuple[Any, Any]], **extra: Any) -> int:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 5}
    )
    n = 0
    for key, value in records:
        while True:
            try:
                producer.produce(topic, key=key, value=value, **extra)
                break
            except BufferError:
                producer.poll(0.1)
        n += 1
    assert producer.flush(60) == 0
    return n


def open_transactions(bootstrap: str, topics: dict[str, int]) -> list[str]:
    """Partitions whose last stable offset is behind the high watermark."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = {
        TopicPartition(t, p): OffsetSpec.latest() for t, n in topics.items() for p in range(n)
    }
    stable = admin.list_offsets(request, isolation_level=IsolationLevel.READ_COMMITTED)
    high = admin.list_offsets(request, isolation_level=IsolationLevel.READ_UNCOMMITTED)
    return [
        f"{tp.topic}[{tp.partition}]"
        for tp in request
        if stable[tp].result().offset != high[tp].result().offset
    ]


def read_committed(
    bootstrap: str,
    topic: str,
    done: Callable[[list[Any]], bool],
    timeout: float = 120.0,
) -> list[Any]:
    """Read every committed record of ``topic`` until ``done(records)`` holds.

    Records are ``(partition, offset, key, value)``; fails after ``timeout``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{os.getpid()}-{time.monotonic_ns()}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    metadata = consumer.list_topics(topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in metadata.partitions])
    records: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while not done(records):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{topic}: condition not met in {timeout}s ({len(records)} records)"
                )
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is not None:
                    assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
                    continue
                records.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
    finally:
        consumer.close()
    return records


def assignment(
    application_id: str,
    generation: int,
    members: dict[str, dict[str, list[str]]],
    partition_map: dict[str, dict[str, int]] | None = None,
) -> AssignmentDocument:
    return AssignmentDocument.model_validate(
        {
            "version": 1,
            "application_id": application_id,
            "generation": generation,
            "members": {m: MemberRoles(**roles).model_dump() for m, roles in members.items()},
            "partition_map": partition_map or {},
        }
    )


def publish(kube_api: Any, namespace: str, name: str, document: AssignmentDocument) -> None:
    """Create or replace the assignment ConfigMap, as the operator does."""
    publish_encoded(kube_api, namespace, name, document.generation, encode(document))


def publish_encoded(kube_api: Any, namespace: str, name: str, generation: int, blob: bytes) -> None:
    """Publish an already encoded document (which may be one the protocol refuses)."""
    from kubernetes import client

    core = client.CoreV1Api(kube_api)
    data, binary_data = configmap_data(generation, blob)
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels={MANAGED_BY: MANAGER}),
        data=data,
        binary_data=binary_data,
    )
    try:
        core.replace_namespaced_config_map(name, namespace, body)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
        core.create_namespaced_config_map(namespace, body)


class WorkerProcess:
    def __init__(
        self,
        *,
        app: str,
        member: str,
        namespace: str,
        configmap: str,
        bootstrap: str,
        state_dir: Path,
        kubeconfig: Path,
        log_dir: Path,
        app_args: dict[str, str] | None = None,
        extra: list[str] | None = None,
    ) -> None:
        self.member = member
        self.port = free_port("127.0.0.1")
        self.log_path = log_dir / f"{member}-{time.monotonic_ns()}.log"
        self.args = [
            sys.executable,
            "-m",
            "segue",
            "worker",
            "--app",
            app,
            "--member",
            member,
            "--namespace",
            namespace,
            "--assignment-configmap",
            configmap,
            "--bootstrap-servers",
            bootstrap,
            "--state-dir",
            str(state_dir),
            "--kubeconfig",
            str(kubeconfig),
            "--metrics-host",
            "127.0.0.1",
            "--metrics-port",
            str(self.port),
        ]
        for key, value in (app_args or {}).items():
            self.args += ["--app-arg", f"{key}={value}"]
        self.args += extra or []
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("POD_", "SEGUE_"))}
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            self.args, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        _, text = self.get("/metrics")
        out = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return out

    def metric(self, name: str, **labels: str) -> float | None:
        try:
            return self.metrics().get((name, tuple(sorted(labels.items()))))
        except (urllib.error.URLError, ConnectionError, OSError):
            return None

    def wait_for(self, what: str, check: Callable[[], bool], timeout: float = 90.0) -> None:
        began = time.monotonic()
        deadline = began + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"{self.member} exited ({self.proc.returncode}) waiting for {what}:\n"
                    f"{self.log()[-4000:]}"
                )
            try:
                if check():
                    note_wait(what, time.monotonic() - began, timeout)
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.1)
        raise AssertionError(
            f"{self.member}: {what} not reached in {timeout}s:\n{self.log()[-4000:]}"
        )

    def wait_ready(self, timeout: float = 90.0) -> None:
        self.wait_for("/readyz 200", lambda: self.get("/readyz")[0] == 200, timeout)

    def wait_generation(self, generation: int, timeout: float = 60.0) -> None:
        self.wait_for(
            f"generation {generation}",
            lambda: self.metric("segue_assignment_generation") == generation,
            timeout,
        )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def terminate(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        if hasattr(self, "_log"):
            self._log.close()


def json_values(records: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(v) for _, _, _, v in records]
