"""StreamApps on a cluster, and steady input into a topic: what the demo, the soak, the
benchmarks and the end-to-end tests drive an app with.

``Apps`` reads and changes StreamApps through a real API server, as users' tools
would (the operator's own status model, ``/scale`` as ``kubectl scale`` and an HPA
use it); ``SteadyInput`` writes records at a steady rate and counts what was
acknowledged, which the exact-count checks compare the output against.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, cast

from confluent_kafka import KafkaException, Producer
from kubernetes import client

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.status import Condition, StreamAppStatus, find_condition


def _name(obj: Any) -> str:
    """A listed object's name (the API server always sets it)."""
    return str(obj.metadata.name)


class Apps:
    """StreamApps of one namespace through the real API server."""

    def __init__(self, api_client: Any, namespace: str) -> None:
        self.custom = client.CustomObjectsApi(api_client)
        self.core = client.CoreV1Api(api_client)
        self.namespace = namespace

    def create(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body)

    def get(self, name: str) -> dict[str, Any]:
        obj = self.custom.get_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)
        return cast(dict[str, Any], obj)

    def exists(self, name: str) -> bool:
        try:
            self.get(name)
        except client.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def configmaps(self, name: str) -> list[str]:
        items = self.core.list_namespaced_config_map(
            self.namespace, label_selector=f"segue.dev/app={name}"
        ).items
        return [_name(c) for c in items]

    def status(self, name: str) -> StreamAppStatus:
        """Read through the operator's own status model, as users' tools would."""
        return StreamAppStatus.model_validate(self.get(name).get("status") or {})

    def scale(self, name: str, replicas: int) -> None:
        """Through the /scale subresource, as ``kubectl scale`` and an HPA do."""
        self.custom.patch_namespaced_custom_object_scale(
            GROUP, VERSION, self.namespace, PLURAL, name, {"spec": {"replicas": replicas}}
        )

    def pods(self, name: str) -> dict[str, Any]:
        items = self.core.list_namespaced_pod(
            self.namespace, label_selector=f"segue.dev/app={name}"
        ).items
        return {_name(p): p for p in items}

    def events(self, name: str) -> list[tuple[str, str]]:
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name}"
        ).items
        return [(e.reason or "", e.message or "") for e in items]

    def event_counts(self, name: str) -> dict[str, list[int]]:
        """reason -> the count of each Event object with that reason."""
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name}"
        ).items
        counts: dict[str, list[int]] = {}
        for e in items:
            counts.setdefault(e.reason or "", []).append(e.count or 1)
        return counts

    def learning(self, name: str) -> bool:
        """Some member holds a learner copy (a scale-up in flight, nothing handed yet)."""
        return any(m.learning for m in self.status(name).members or [])

    def condition(self, name: str, kind: str) -> Condition | None:
        return find_condition(self.status(name).conditions, kind)

    def balanced(self, name: str, replicas: int) -> bool:
        status = self.status(name)
        members = status.members or []
        actives = [m.active for m in members]
        balanced = find_condition(status.conditions, "Balanced")
        return (
            balanced is not None
            and balanced.status == "True"
            and len(members) == replicas
            and all(m.role == "member" for m in members)
            and status.ready_replicas == replicas
            and bool(actives)
            and max(actives) - min(actives) <= 1
            and len(self.pods(name)) == replicas
        )


class SteadyInput(threading.Thread):
    """Writes ``rate`` records/s; record ``i`` is ``make(i) -> (key, value, counted)``,
    and ``sent`` counts each ``counted`` name (a word, a key) as acknowledged input.

    ``exactly_once`` writes in transactions of ``BATCH_SECONDS`` and counts a record
    once its transaction committed (an aborted one is written again): an idempotent
    producer alone can still write a record twice across a leader change
    (librdkafka#4953, seen here as a word counted once more than it was sent during a
    rolling restart of three brokers), which a read_committed app would count."""

    BATCH_SECONDS = 0.1

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        rate: float,
        make: Callable[[int], tuple[str, str, str]],
        exactly_once: bool = False,
        **config: Any,
    ) -> None:
        super().__init__(daemon=True)
        self.transactional_id = f"input-{topic}-{uuid.uuid4().hex[:8]}" if exactly_once else ""
        if exactly_once:
            config["transactional.id"] = self.transactional_id
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, **config})
        self.topic, self.rate, self.make = topic, rate, make
        self.exactly_once = exactly_once
        self.sent: dict[str, int] = {}
        self.errors: list[str] = []  # delivery reports that failed (the record may be in)
        self.failure: BaseException | None = None
        self.stopped = threading.Event()
        self._batch: list[tuple[str, str, str]] = []
        self._batch_began = 0.0
        self.last_commit = 0.0  # monotonic: the last batch committed (exactly_once)

    def _delivered(self, error: Any, msg: Any) -> None:
        if error is not None:
            self.errors.append(f"{msg.topic()}[{msg.partition()}] key {msg.key()!r}: {error}")

    def _produce(self, key: str, value: str) -> None:
        self.producer.produce(self.topic, key=key, value=value, on_delivery=self._delivered)
        self.producer.poll(0)

    def _count(self, counted: str) -> None:
        self.sent[counted] = self.sent.get(counted, 0) + 1

    def _send(self, record: tuple[str, str, str]) -> None:
        if not self.exactly_once:
            self._produce(record[0], record[1])
            self._count(record[2])
            return
        if not self._batch:
            self.producer.begin_transaction()
            self._batch_began = time.monotonic()
        self._batch.append(record)
        self._produce(record[0], record[1])

    def _commit(self) -> None:
        """Commit the open batch, retrying what Kafka says can be retried and writing
        an aborted batch again; only then are its records counted."""
        while True:
            try:
                self.producer.commit_transaction(30)
                break
            except KafkaException as exc:
                error = exc.args[0]
                if error.retriable():
                    continue
                if not error.txn_requires_abort():
                    raise
                self.producer.abort_transaction(30)
                self.producer.begin_transaction()
                for key, value, _ in self._batch:
                    self._produce(key, value)
        for _, _, counted in self._batch:
            self._count(counted)
        self._batch = []
        self.last_commit = time.monotonic()

    def run(self) -> None:
        try:
            if self.exactly_once:
                self.producer.init_transactions(60)
            start, i = time.monotonic(), 0
            while not self.stopped.is_set():
                delay = start + i / self.rate - time.monotonic()
                if delay > 0:
                    time.sleep(min(delay, 0.05))
                else:
                    self._send(self.make(i))
                    i += 1
                if self._batch and time.monotonic() - self._batch_began >= self.BATCH_SECONDS:
                    self._commit()
            if self._batch:
                self._commit()
            assert self.producer.flush(30) == 0
        except BaseException as exc:  # said by stop(): a dead input must not pass for idle
            self.failure = exc
            if not self.exactly_once:
                raise  # as before: the thread's own report (its counts are checked anyway)

    def stop(self) -> dict[str, int]:
        self.stopped.set()
        self.join(60)
        if self.failure is not None and self.exactly_once:
            raise RuntimeError(f"the input into {self.topic} failed") from self.failure
        return dict(self.sent)


def text_input(
    bootstrap: str, topic: str, words: int, rate: float, exactly_once: bool = False, **config: Any
) -> SteadyInput:
    """WordCount's input: line ``i`` is the word ``w<i mod words>``; ``config`` goes
    to the producer; ``exactly_once`` for input that a broker's restart or a leader
    change cannot duplicate (``SteadyInput``)."""

    def line(i: int) -> tuple[str, str, str]:
        return str(i), f"w{i % words}", f"w{i % words}"

    return SteadyInput(bootstrap, topic, rate, line, exactly_once, **config)


def keyed_input(
    bootstrap: str, topic: str, keys: int, rate: float, exactly_once: bool = False
) -> SteadyInput:
    """Keys ``k0..k<n>`` placed by the Java-compatible murmur2 partitioner, so after the
    topic grows every key lands where Kafka Streams' clients would put it. Idempotent:
    a batch retried across a broker's restart would otherwise be written twice (seen:
    one key counted once more than it was sent after a broker crash); ``exactly_once``
    for a fault test, where even that is not enough (``SteadyInput``)."""

    def record(i: int) -> tuple[str, str, str]:
        return f"k{i % keys}", str(i), f"k{i % keys}"

    return SteadyInput(
        bootstrap,
        topic,
        rate,
        record,
        exactly_once,
        partitioner="murmur2_random",
        **{"topic.metadata.refresh.interval.ms": 1000, "enable.idempotence": True},
    )
