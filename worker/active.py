"""An active task: process input records, which its transaction commits exactly once.

Each active task owns one producer and its transaction (``transaction``): this module
runs the processor on each record, routes what it emits to the sinks, applies the
error policy to a record it cannot process (``on_error``: stop, skip or dead-letter),
keeps the input offsets the next commit sends, and drops a record its consumer
delivers again below where this instance is. ``runtime`` decides when a task
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
        self.redelivered = 0
        self._position: dict[tuple[str, int], int] = {}  # input partition -> next offset
        self._dropping: set[tuple[str, int]] = set()  # partitions redelivering now

    # -- records --

    def process(self, msg: Message) -> None:
        topic, partition, offset = (
            str(msg.topic()),
            int(msg.partition() or 0),
            int(msg.offset() or 0),
        )
        key = (topic, partition)
        if offset < self._position.get(key, offset):
            self._redelivered(key, offset)
            return
        self._position[key] = offset + 1
        if self._dropping:
            self._dropping.discard(key)
        if self.processed == 0:
            phase(self.task_id, "first-record", f"{topic}[{partition}]@{offset}")
        self._begin()
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
        self._offsets[key] = offset + 1
        self.processed += 1

    def _redelivered(self, key: tuple[str, int], offset: int) -> None:
        """A record this instance already processed came again (a client refetching
        after a leader change): its output is in a transaction already, so it is
        dropped, never processed twice. Said once per partition and burst."""
        self.redelivered += 1
        if key in self._dropping:
            return
        self._dropping.add(key)
        (topic, partition), position = key, self._position[key]
        log.warning(
            "task %s: %s[%d]@%d delivered again (the task is at %d): dropped, and any "
            "more of it below %d",
            self.task_id,
            topic,
            partition,
            offset,
            position,
            position,
            extra=about(self.task_id),
        )

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
