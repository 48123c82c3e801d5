"""The input consumer's partitions, and which task each one feeds.

Active tasks share one consumer (``assign()`` only; never a group member). This
module keeps the partition -> task map in step with the consumer's assignment:
a partition is routed to a task only while it is assigned for it, so a record
fetched before its task was revoked is dropped (its offset is not committed, and
the next owner reads it again). Offsets are always given explicitly: the ones
committed under the application's group, read after the task's fence
(``fencing``), or the beginning. :func:`source_inputs` says which partitions a
task reads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Generic, TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Message, TopicPartition

from segue.protocol.tasks import TaskId, source_partitions
from segue.worker.fencing import warm_metadata
from segue.worker.kafka import Partition, committed_offsets
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology

log = logging.getLogger(__name__)

T = TypeVar("T")


def source_inputs(
    application_id: str, task: str, sub: SubTopology, resolved: ResolvedSub
) -> list[Partition]:
    """The source partitions ``task`` reads (``tasks.source_partitions``)."""
    task_id = TaskId.parse(task)
    inputs: list[Partition] = []
    for source in sub.sources:
        topic = source.topic(application_id)
        available = resolved.sources.get(topic, 0)
        inputs += [(topic, p) for p in source_partitions(task_id, available, resolved.expansion)]
    return inputs


def at(offsets: Mapping[Partition, int]) -> str:
    """``offsets`` as a log line says them: ``topic[partition]@offset`` each."""
    return " ".join(f"{t}[{p}]@{o}" for (t, p), o in sorted(offsets.items()))


class InputRouter(Generic[T]):
    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self._owner: dict[Partition, T] = {}

    def __bool__(self) -> bool:
        return bool(self._owner)

    def owner_of(self, msg: Message) -> T | None:
        return self._owner.get((msg.topic(), msg.partition()))  # type: ignore[arg-type]

    def assign(
        self, owner: T, partitions: Iterable[Partition], offsets: Mapping[Partition, int]
    ) -> None:
        partitions = list(partitions)
        self.consumer.incremental_assign(
            [TopicPartition(t, p, offsets.get((t, p), OFFSET_BEGINNING)) for t, p in partitions]
        )
        for key in partitions:
            self._owner[key] = owner

    def assign_committed(self, owner: T, partitions: Iterable[Partition]) -> None:
        """Assign from the committed offsets, read now (the task is already fenced)."""
        partitions = list(partitions)
        warm_metadata(self.consumer, [t for t, _ in partitions])
        self.assign(owner, partitions, committed_offsets(self.consumer, partitions))

    def unassign(self, partitions: Iterable[Partition]) -> None:
        partitions = list(partitions)
        for key in partitions:
            self._owner.pop(key, None)
        if not partitions:
            return
        try:
            self.consumer.incremental_unassign([TopicPartition(t, p) for t, p in partitions])
        except KafkaException as exc:
            log.error("unassigning %s failed: %s", partitions, exc)
