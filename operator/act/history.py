"""Send history records to Kafka: asynchronous, idempotent, never in a step's way.

One idempotent producer per Kafka cluster and credentials (an app's own cluster gets
its own rows, keyed ``namespace/app`` so one app's rows stay in order in one
partition). :meth:`HistoryProducer.send` only enqueues and serves the callbacks of
earlier sends; it never blocks and never raises: a full queue, a refused login or a
missing topic become a count in ``segue_operator_history_failures_total`` and a
warning naming the app, the topic and Kafka's reason (never the credentials, which
stay in the producer's configuration). docs/operator.md, "History".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from segue.operator.metrics import OperatorMetrics
from segue.protocol.history import HistoryRecord, history_key

log = logging.getLogger("segue.operator.history")

# Bounded: a cluster that is down holds at most this many rows, then they are dropped.
PRODUCER_CONFIG = {
    "enable.idempotence": True,  # acks=all, no duplicates or reordering on retries
    "linger.ms": 100,
    "queue.buffering.max.messages": 10_000,
    "compression.type": "zstd",
}


class HistoryProducer:
    def __init__(self, topic: str, metrics: OperatorMetrics, timeout: float = 60.0) -> None:
        self.topic = topic
        self.metrics = metrics
        self.timeout = timeout  # seconds a row may wait for its cluster before it is dropped
        self._producers: dict[tuple[str, tuple[tuple[str, str], ...]], Producer] = {}
        self._lock = threading.Lock()

    def send(self, bootstrap: str, credentials: Mapping[str, str], row: HistoryRecord) -> None:
        """Enqueue ``row`` for the app's cluster; failures are counted and logged."""
        labels = (row.namespace, row.app)
        try:
            producer = self._producer(bootstrap, credentials)
            producer.produce(
                self.topic,
                key=history_key(row.namespace, row.app).encode(),
                value=row.model_dump_json().encode(),
                on_delivery=lambda err, msg: self._delivered(labels, err, msg),
            )
            producer.poll(0)
        except (BufferError, KafkaException, ValueError) as exc:
            if isinstance(exc, KafkaException) and exc.args[0].fatal():
                # A fatal producer (an ACL refused its producer id) never sends again:
                # the next row gets a new one, which works once the ACL is granted.
                with self._lock:
                    self._producers.pop(_key(bootstrap, credentials), None)
            self._failed(labels, str(exc))

    def _producer(self, bootstrap: str, credentials: Mapping[str, str]) -> Producer:
        key = _key(bootstrap, credentials)
        with self._lock:
            if key not in self._producers:
                config: dict[str, Any] = {
                    **dict(credentials),
                    **PRODUCER_CONFIG,
                    "message.timeout.ms": int(self.timeout * 1000),
                    "bootstrap.servers": bootstrap,
                    "client.id": "segue-operator-history",
                }
                self._producers[key] = Producer(config)
            return self._producers[key]

    def _delivered(self, labels: tuple[str, str], err: KafkaError | None, _: Message) -> None:
        if err is None:
            self.metrics.history_records.labels(*labels).inc()
        else:
            self._failed(labels, err.str())

    def _failed(self, labels: tuple[str, str], reason: str) -> None:
        self.metrics.history_failures.labels(*labels).inc()
        log.warning("%s/%s: history record to %s not delivered: %s", *labels, self.topic, reason)

    def flush(self, timeout: float = 5.0) -> int:
        """Deliver what is queued, within ``timeout`` per cluster; rows left undelivered."""
        with self._lock:
            producers = list(self._producers.values())
        left = 0
        for producer in producers:
            try:
                left += producer.flush(timeout)
            except KafkaException:  # fatal: what it holds is not delivered
                left += len(producer)
        return left


def _key(bootstrap: str, credentials: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return bootstrap, tuple(sorted(credentials.items()))
