"""Task ids and which partitions a task reads: pure functions, no I/O.

A task is one partition of one sub-topology, ``"<sub>_<partition>"``, exactly the
assignor's ids (``segue.assignor.ids``, re-parsed here so the data plane does not
depend on the decision core). With no partition expansion, task ``s_t`` reads
partition ``t`` of each source topic of sub-topology ``s`` and writes partition
``t`` of each of its changelogs. After an expansion (seed 004, ``partition_map``
in docs/protocol.md) it reads every source partition ``p`` with
``p mod initial == t``; the changelogs keep ``initial`` partitions, so the task
count never changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_TASK_ID = re.compile(r"^(0|[1-9][0-9]*)_(0|[1-9][0-9]*)$")


@dataclass(frozen=True, order=True)
class TaskId:
    subtopology: int
    partition: int

    def __str__(self) -> str:
        return f"{self.subtopology}_{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        match = _TASK_ID.match(text)
        if match is None:
            raise ValueError(f"malformed task id {text!r}: expected '<subtopology>_<partition>'")
        return cls(int(match.group(1)), int(match.group(2)))


@dataclass(frozen=True)
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
    """The source partitions (of each source topic) task ``task`` reads.

    ``available`` is the partition count the worker sees in the topic metadata;
    partitions the operator has not published in ``partition_map`` yet are not read.
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
