"""Task ids, and which source partitions a task reads.

A task is one partition of one sub-topology, ``"<sub>_<partition>"`` (Kafka Streams'
``TaskId``), and sorts numerically by (sub-topology, partition). With no partition
expansion, task ``s_t`` reads partition ``t`` of each source topic of sub-topology ``s``
and writes partition ``t`` of each changelog. After an expansion (seed 004, the
document's ``partition_map``) it reads every source partition ``p`` with
``p mod initial == t``; changelogs keep ``initial`` partitions, so the task count never
changes. The assignor decides expansions (``segue.assignor.expansion``); the worker
reads by these rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

TASK_ID_PATTERN = r"^(0|[1-9][0-9]*)_(0|[1-9][0-9]*)$"
_TASK_ID = re.compile(TASK_ID_PATTERN)


@dataclass(frozen=True, order=True, slots=True)
class TaskId:
    subtopology: int
    partition: int

    def __str__(self) -> str:
        return f"{self.subtopology}_{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """``"1_3"`` -> ``TaskId(1, 3)``; ValueError names a malformed id. Cached: the
        decision core parses the same few thousand ids on every look."""
        return _parse(text)


@lru_cache(maxsize=1 << 16)
def _parse(text: str) -> TaskId:
    return TaskId(*task_sort_key(text))


def task_id(subtopology: int, partition: int) -> str:
    return f"{subtopology}_{partition}"


@lru_cache(maxsize=1 << 16)
def task_sort_key(task: str) -> tuple[int, int]:
    """``"1_3"`` -> ``(1, 3)``: task id strings sort as Kafka Streams sorts them,
    numerically, sub-topology first; ValueError names a malformed id. Cached, and without
    a :class:`TaskId` to build: the assignor keys every task of a request by it."""
    match = _TASK_ID.match(task)
    if match is None:
        raise ValueError(
            f"malformed task id {task!r}: expected '<subtopology>_<partition>', e.g. '1_3'"
        )
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True, slots=True)
class Expansion:
    """A sub-topology whose source topics grew from ``initial`` to ``current`` partitions."""

    initial: int
    current: int

    def __post_init__(self) -> None:
        if self.initial < 1 or self.current < self.initial:
            raise ValueError(f"bad expansion {self.initial} -> {self.current}")


def task_count(source_partitions: int, expansion: Expansion | None) -> int:
    """How many tasks a sub-topology has: its source partition count before any expansion."""
    return expansion.initial if expansion is not None else source_partitions


def source_partitions(task: TaskId, available: int, expansion: Expansion | None) -> list[int]:
    """The source partitions (of each source topic) ``task`` reads.

    ``available`` is the partition count the reader sees in the topic metadata;
    partitions not yet published in ``partition_map`` are not read.
    """
    if expansion is None:
        return [task.partition] if task.partition < available else []
    limit = min(available, expansion.current)
    return list(range(task.partition, limit, expansion.initial))


def task_for_partition(subtopology: int, partition: int, expansion: Expansion | None) -> TaskId:
    """The task that owns source partition ``partition`` of a sub-topology."""
    if expansion is None:
        return TaskId(subtopology, partition)
    return TaskId(subtopology, partition % expansion.initial)


def copartitioning_error(partition_counts: Mapping[str, int]) -> str | None:
    """None when every source topic of one sub-topology has the same partition count,
    else a message naming them (a task reads the same partition number of each)."""
    if len(set(partition_counts.values())) <= 1:
        return None
    listed = ", ".join(f"{t}={n}" for t, n in sorted(partition_counts.items()))
    return f"source topics are not co-partitioned: {listed}"
