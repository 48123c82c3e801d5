"""An active task: process input records and commit them exactly once.

Each active task owns one producer. In exactly-once mode (the default) it is
transactional with ``transactional.id = <application>-<task>``: the processor's
output, the task's changelog records and its input offsets (group id = the
application id) commit in one Kafka transaction, and a newer owner's
``init_transactions`` fences this one at the broker (``TaskFenced``). A
transaction begins with the first record after a commit and is committed once
it is ``commit_interval`` old, so no transaction stays open while the task is
idle. Stores (``state.store``) reach disk only after the commit. ``runtime``
decides when a task starts, stops or is torn down; this module only runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from segue.worker.closing import close_later
from segue.worker.context import TaskContext, headers_of, raw_bytes
from segue.worker.kafka import (
    ABORT_TIMEOUT,
    CLOSE_TIMEOUT,
    COMMIT_GRACE,
    COMMIT_TIMEOUT,
    is_fenced,
)
from segue.worker.processor import Record
from segue.worker.serdes import MalformedRecord
from segue.worker.state.engine import StoreCorrupt
from segue.worker.state.store import TaskStore
from segue.worker.topics import dead_letter_topic
from segue.worker.topology import SubTopology, TopicSpec
from segue.worker.trace import phase
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)


class TaskFenced(Exception):
    """Another owner took the task over: tear it down, do not retry."""


class TaskAborted(Exception):
    """The transaction was aborted (not fenced): restart the task from its commit."""


class TaskFailed(Exception):
    """The error policy stopped the task (a malformed record or a processor error)."""


class ActiveTask:
    def __init__(
        self,
        task_id: str,
        sub: SubTopology,
        *,
        application_id: str,
        member: str,
        producer: Producer,
        stores: dict[str, TaskStore],
        consumer: Consumer,
        exactly_once: bool = True,
        commit_interval: float = 0.1,
        on_skip: Callable[[str], None] | None = None,
    ) -> None:
        self.task_id = task_id
        self.sub = sub
        self.application_id = application_id
        self.member = member
        self.producer = producer
        self.stores = stores
        self.consumer = consumer
        self.exactly_once = exactly_once
        self.commit_interval = commit_interval
        self.on_skip = on_skip or (lambda reason: None)
        self.sources: dict[str, TopicSpec] = {s.topic(application_id): s for s in sub.sources}
        self.sinks: dict[str, TopicSpec] = {s.ref: s for s in sub.sinks}
        self.ctx = TaskContext(task_id, member, stores, self.sinks, application_id)
        self.processed = 0
        self.commits = 0
        self.in_txn = False
        self.txn_started = 0.0
        self._offsets: dict[tuple[str, int], int] = {}
        self._changelog_last: dict[str, int] = {}
        self._delivery_error: KafkaError | None = None

    # -- records --

    def process(self, msg: Message) -> None:
        if self.processed == 0:
            phase(self.task_id, "first-record", f"{msg.topic()}[{msg.partition()}]@{msg.offset()}")
        self._begin()
        topic, partition, offset = (
            str(msg.topic()),
            int(msg.partition() or 0),
            int(msg.offset() or 0),
        )
        spec = self.sources[topic]
        try:
            record = Record(
                key=spec.key.deserialize(raw_bytes(msg.key())),
                value=spec.value.deserialize(raw_bytes(msg.value())),
                timestamp=msg.timestamp()[1],
                topic=topic,
                partition=partition,
                offset=offset,
                headers=headers_of(msg),
            )
            self.sub.processor(record, self.ctx)
        except StoreCorrupt:
            raise  # the store, not the record, is bad: the task is wiped and restored
        except Exception as exc:
            self.ctx.outgoing.clear()
            for store in self.stores.values():
                store.reject_record()
            self._bad_record(msg, exc)
        else:
            for store in self.stores.values():
                store.accept_record()
            for out in self.ctx.outgoing:
                self._produce(
                    out.topic,
                    key=out.key,
                    value=out.value,
                    partition=None,
                    timestamp=out.timestamp,
                    headers=out.headers,
                )
            self.ctx.outgoing.clear()
        self._offsets[(topic, partition)] = offset + 1
        self.processed += 1

    def _bad_record(self, msg: Message, exc: Exception) -> None:
        where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
        kind = "malformed" if isinstance(exc, MalformedRecord) else "processor_error"
        policy = self.sub.on_error
        if policy == "stop":
            raise TaskFailed(
                f"task {self.task_id}: {kind} record at {where}: {exc!r} "
                "(error policy 'stop'; set on_error='skip' or 'dead_letter' to go on)"
            ) from exc
        log.error("task %s: %s record at %s (%s): %r", self.task_id, kind, where, policy, exc)
        if policy == "dead_letter":
            headers = [
                ("segue.error", repr(exc).encode()[:1000]),
                ("segue.source", where.encode()),
                ("segue.task", self.task_id.encode()),
            ]
            self._produce(
                dead_letter_topic(self.application_id),
                key=raw_bytes(msg.key()),
                value=raw_bytes(msg.value()),
                partition=0,
                headers=headers,
            )
        self.on_skip(kind)

    def _produce(
        self,
        topic: str,
        *,
        key: bytes | None,
        value: bytes | None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
        on_delivery: Callable[[KafkaError | None, Message], None] | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {
            "key": key,
            "value": value,
            "on_delivery": on_delivery or self._delivered,
        }
        if partition is not None:
            kwargs["partition"] = partition
        if timestamp:
            kwargs["timestamp"] = timestamp
        if headers:
            kwargs["headers"] = headers
        while True:
            try:
                self.producer.produce(topic, **kwargs)
                return
            except BufferError:
                self.producer.poll(0.05)
            except KafkaException as exc:
                self._raise_for(exc.args[0], "produce")

    def _delivered(self, error: KafkaError | None, msg: Message) -> None:
        if error is not None and self._delivery_error is None:
            self._delivery_error = error

    # -- transactions --

    def _begin(self) -> None:
        if self.in_txn:
            return
        if self.exactly_once:
            try:
                self.producer.begin_transaction()
            except KafkaException as exc:
                self._raise_for(exc.args[0], "begin_transaction")
        self.in_txn = True
        self.txn_started = time.monotonic()

    def commit_due(self, now: float) -> bool:
        return self.in_txn and now - self.txn_started >= self.commit_interval

    def commit(self, timeout: float = COMMIT_TIMEOUT) -> None:
        """Write the changelog, commit output + changelog + offsets, then the stores."""
        if not self.in_txn:
            return
        began = time.monotonic()
        self._changelog_last.clear()
        for store in self.stores.values():
            callback = self._changelog_callback(store.name)
            for key, value in store.changelog_writes().items():
                self._produce(
                    store.changelog,
                    key=key,
                    value=value,
                    partition=store.partition,
                    on_delivery=callback,
                )
        try:
            with bounded("flush", timeout, COMMIT_GRACE):
                undelivered = self.producer.flush(timeout)
        except KafkaException as exc:
            self._raise_for(exc.args[0], "flush")
        if undelivered > 0:
            raise TaskAborted(f"task {self.task_id}: output not delivered within {timeout}s")
        if self._delivery_error is not None:
            self._raise_for(self._delivery_error, "delivery")
        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self._offsets.items())]
        try:
            if self.exactly_once:
                if offsets:
                    with bounded("send_offsets_to_transaction", timeout, COMMIT_GRACE):
                        self.producer.send_offsets_to_transaction(
                            offsets, self.consumer.consumer_group_metadata(), timeout
                        )
                with bounded("commit_transaction", timeout, COMMIT_GRACE):
                    self.producer.commit_transaction(timeout)
            elif offsets:
                with bounded("commit", timeout, COMMIT_GRACE):  # takes no timeout
                    self.consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            self._raise_for(exc.args[0], "commit")
        for store in self.stores.values():
            store.commit(self._changelog_last.get(store.name))
        self._offsets.clear()
        self.in_txn = False
        if not self.commits:
            phase(self.task_id, "first-commit", f"seconds={time.monotonic() - began:.3f}")
        self.commits += 1

    def _changelog_callback(self, store: str) -> Callable[[KafkaError | None, Message], None]:
        def delivered(error: KafkaError | None, msg: Message) -> None:
            if error is not None:
                self._delivered(error, msg)
            else:
                offset = int(msg.offset() or 0)
                self._changelog_last[store] = max(self._changelog_last.get(store, -1), offset)

        return delivered

    def _raise_for(self, error: KafkaError, what: str) -> None:
        if is_fenced(error):
            raise TaskFenced(f"task {self.task_id}: fenced during {what}: {error}")
        raise TaskAborted(f"task {self.task_id}: {what} failed: {error}")

    def abort(self) -> None:
        """Drop the open transaction (the broker discards its records)."""
        for store in self.stores.values():
            store.abort()
        self._offsets.clear()
        self.ctx.outgoing.clear()
        if self.in_txn and self.exactly_once:
            try:
                with bounded("abort_transaction", ABORT_TIMEOUT):
                    self.producer.abort_transaction(ABORT_TIMEOUT)
            except KafkaException as exc:
                log.warning("task %s: abort_transaction failed: %s", self.task_id, exc)
        self.in_txn = False

    def close(self) -> None:
        """Close the producer off the loop (``closing``): the transaction is over."""
        close_later(f"task {self.task_id}", self.producer.close, CLOSE_TIMEOUT)
