"""An active task: process input records, which its transaction commits exactly once.

Each active task owns one producer and its transaction (``transaction``): this module
runs the processor on each record, routes what it emits to the sinks, applies the
error policy to a record it cannot process (``on_error``: stop, skip or dead-letter),
and keeps the input offsets the next commit sends. ``runtime`` decides when a task
starts, stops or is torn down; ``processing`` runs it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from confluent_kafka import Consumer, Message, Producer

from segue.worker.context import TaskContext, headers_of, raw_bytes
from segue.worker.logs import about
from segue.worker.processor import Record
from segue.worker.serdes import MalformedRecord
from segue.worker.state.engine import StoreCorrupt
from segue.worker.state.store import TaskStore
from segue.worker.topics import dead_letter_topic
from segue.worker.topology import SubTopology, TopicSpec
from segue.worker.trace import phase
from segue.worker.transaction import TaskTransaction

log = logging.getLogger(__name__)


class TaskFailed(Exception):
    """The error policy stopped the task (a malformed record or a processor error)."""


class ActiveTask(TaskTransaction):
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
        super().__init__(
            task_id,
            producer=producer,
            stores=stores,
            consumer=consumer,
            exactly_once=exactly_once,
            commit_interval=commit_interval,
        )
        self.sub = sub
        self.application_id = application_id
        self.member = member
        self.on_skip = on_skip or (lambda reason: None)
        self.sources: dict[str, TopicSpec] = {s.topic(application_id): s for s in sub.sources}
        self.sinks: dict[str, TopicSpec] = {s.ref: s for s in sub.sinks}
        self.ctx = TaskContext(task_id, member, stores, self.sinks, application_id)
        self.processed = 0

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
        log.error(
            "task %s: %s record at %s (%s): %r",
            self.task_id,
            kind,
            where,
            policy,
            exc,
            extra=about(self.task_id),
        )
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

    def abort(self) -> None:
        self.ctx.outgoing.clear()
        super().abort()
