"""The worker's Kafka clients and admin calls, configured in one place.

- the input consumer: ``assign()`` only, read_committed, never commits by itself
  (offsets go into each task's transaction under group id = application id);
- one transactional producer per active task, ``transactional.id =
  <application>-<task>`` (docs/protocol.md, Safety);
- the admin client: topic metadata, creating internal topics, read_committed end
  offsets for lag. ``state.restore`` configures its own consumer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._listoffsets import OffsetSpec
from confluent_kafka.cimpl import NewTopic

from segue.protocol import transactions
from segue.worker.topics import InternalTopic
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)

# Calls that take no timeout argument are still bounded by the watchdog (``watchdog``):
CLOSE_TIMEOUT = 30.0  # Producer.close() aborts an open transaction and flushes first
# A running task's flush, send_offsets and commit, each: well inside the transaction's
# life (transaction.timeout.ms below), and a hung one is told from a slow one
# COMMIT_GRACE past that, 5 s in all: the loop then abandons the commit's thread and
# fences its producer anew (worker/committing.py), so an owner librdkafka leaves hanging
# after a broker restart processes again within 15 s of the broker serving
# (tests/faults/test_restart.py). A commit that is merely slow fails after 3 s and the
# task restarts from its last commit: nothing lost or doubled.
COMMIT_TIMEOUT = 3.0
COMMIT_GRACE = 2.0
ABORT_TIMEOUT = 10.0
COMMITTED_TIMEOUT = 30.0

Partition = tuple[str, int]  # (topic, partition)

# Every client of the worker's, under the app's own settings (``spec.kafka.config``
# wins): librdkafka doubles its reconnect wait up to 10 s while a broker is away, so a
# broker back after 4 s was retried 10 s later and its tasks committed again only
# then (tests/faults/test_restart.py[broker]); capped at 1 s, they are back within ~1.5 s.
CLIENT_DEFAULTS: dict[str, Any] = {"reconnect.backoff.max.ms": 1000}

# A login the brokers refused (a wrong password, an unknown user, a failed handshake).
AUTH_CODES = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED}

FENCED_CODES = {
    KafkaError._FENCED,
    KafkaError._FATAL,
    KafkaError.PRODUCER_FENCED,
    KafkaError.INVALID_PRODUCER_EPOCH,
}
# An ACL refused the request: librdkafka makes it fatal for the producer, but no newer
# owner exists, so the task is retried (a new producer) and starts once the ACL is
# granted; as a fence it stayed down for good (tests/operator/test_e2e_auth.py).
AUTHORIZATION_CODES = {
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
}


def input_consumer_config(
    bootstrap: str, application_id: str, extra: dict[str, Any]
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": application_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 50,
        "queued.max.messages.kbytes": 16384,
    }
    config.update(extra)
    return config


def producer_config(bootstrap: str, txn_id: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "linger.ms": 5,
        "partitioner": "murmur2_random",  # Kafka's Java default: keys land where Streams puts them
        "enable.idempotence": True,
        # A cold transactional producer that misses its first coordinator lookup
        # waits for librdkafka's 500 ms coordinator timer unless it reconnects soon.
        "reconnect.backoff.ms": 10,
    }
    if txn_id is not None:
        config["transactional.id"] = txn_id
        # The broker's logs, metrics and client quotas tell each task's producer apart.
        config["client.id"] = txn_id
        # A dead owner's open transaction blocks readers of its topics (read_committed)
        # until the next owner fences it or this timeout aborts it.
        config["transaction.timeout.ms"] = transactions.TIMEOUT_MS
        # init_transactions retries while the previous owner's transaction completes
        # (CONCURRENT_TRANSACTIONS); the default backoff (100 ms doubling to 1 s)
        # lands in every handover pause.
        config["retry.backoff.ms"] = 10
        config["retry.backoff.max.ms"] = 50
    config.update(extra)
    return config


def committed_offsets(
    consumer: Consumer, partitions: Sequence[Partition], timeout: float = COMMITTED_TIMEOUT
) -> dict[Partition, int]:
    """Where each of ``partitions`` resumes: its offset committed under the
    application's group, else ``OFFSET_BEGINNING``.

    The read_committed consumer asks for stable offsets (KIP-447): the broker holds
    the answer until every transaction that committed offsets on these partitions
    has its markers. A transaction Kafka leaves hanging holds it for good
    (docs/reliability.md, "A transaction committed while the only broker stops"),
    so a timeout here says so in the task's error instead of librdkafka's bare one.
    """
    try:
        with bounded("committed", timeout):
            committed = consumer.committed(
                [TopicPartition(t, p) for t, p in partitions], timeout=timeout
            )
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError._TIMED_OUT:
            raise
        names = ", ".join(f"{t}[{p}]" for t, p in partitions)
        raise KafkaException(
            KafkaError(
                KafkaError._TIMED_OUT,
                f"committed offsets of {names} not given within {timeout:.0f}s: a transaction "
                "on them is unfinished, or the broker unreachable (if it lasts while the "
                "broker serves, a hanging transaction: docs/reliability.md)",
            )
        ) from exc
    return {
        (tp.topic, tp.partition): tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
        for tp in committed
    }


def is_fenced(error: KafkaError) -> bool:
    """Fenced, or any fatal producer error other than an ACL's refusal (for a
    transactional producer that is almost always a fence, and retrying would fence the
    new owner in turn)."""
    if error.code() in AUTHORIZATION_CODES:
        return False
    return bool(error.fatal()) or error.code() in FENCED_CODES


class Admin:
    def __init__(self, bootstrap: str, extra: dict[str, Any]) -> None:
        self.refused: str | None = None  # the brokers' last refusal of its login, until one works
        config = {"bootstrap.servers": bootstrap, **extra, "error_cb": self._on_error}
        self.client = AdminClient(config)

    def _on_error(self, error: KafkaError) -> None:
        if error.code() in AUTH_CODES:
            self.refused = error.str()

    def why(self, exc: KafkaException) -> str:
        """What to say of a call that failed: the refused login behind it, if one was
        (the call itself fails as a bare ``Broker transport failure``)."""
        self.client.poll(0)  # error_cb runs only when callbacks are served
        return self.refused or str(exc.args[0] if exc.args else exc)

    def partition_counts(self, timeout: float = 10.0) -> dict[str, int]:
        with bounded("list_topics", timeout):
            metadata = self.client.list_topics(timeout=timeout)
        self.refused = None
        return {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error is None
        }

    def create(self, topics: Iterable[InternalTopic], timeout: float = 30.0) -> None:
        new = [
            NewTopic(
                t.name, num_partitions=t.partitions, replication_factor=-1, config=dict(t.config)
            )
            for t in topics
        ]
        if not new:
            return
        for name, future in self.client.create_topics(new, operation_timeout=timeout).items():
            try:
                with bounded("create_topics", timeout):
                    future.result(timeout=timeout)
                log.info("created topic %s", name)
            except TimeoutError as exc:  # the callers retry a KafkaException
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"{name}: {exc!r}")) from exc
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

    def end_offsets(
        self, partitions: Iterable[tuple[str, int]], timeout: float = 10.0
    ) -> dict[tuple[str, int], int]:
        """Last stable offsets (read_committed) of ``partitions``; missing ones are left out."""
        return self._latest(partitions, IsolationLevel.READ_COMMITTED, timeout)

    def high_watermarks(
        self, partitions: Iterable[tuple[str, int]], timeout: float = 10.0
    ) -> dict[tuple[str, int], int]:
        """High watermarks (read_uncommitted ends) of ``partitions``; missing ones left out."""
        return self._latest(partitions, IsolationLevel.READ_UNCOMMITTED, timeout)

    def _latest(
        self, partitions: Iterable[tuple[str, int]], level: IsolationLevel, timeout: float
    ) -> dict[tuple[str, int], int]:
        latest: Any = OffsetSpec.latest  # untyped in confluent-kafka's stubs
        request = {TopicPartition(t, p): latest() for t, p in partitions}
        if not request:
            return {}
        futures = self.client.list_offsets(request, isolation_level=level, request_timeout=timeout)
        out: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + timeout  # one bound for all: they wait on one request
        for tp, future in futures.items():
            try:
                with bounded("list_offsets", timeout):
                    left = max(0.0, deadline - time.monotonic())
                    out[(tp.topic, tp.partition)] = future.result(timeout=left).offset
            except (KafkaException, TimeoutError) as exc:
                # No answer in time (a leader moving, a broker gone) is an unknown end,
                # as an error is: never the worker's end (seen: a three-broker restart).
                log.debug("end offset of %s[%d] unavailable: %r", tp.topic, tp.partition, exc)
        return out
