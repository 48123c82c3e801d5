"""Partition expansion (Samza SEP-5): grown source topics keep every key on its task.

With the default partitioner a key lives in ``hash(key) % partitions``. If a topic grows from
``n`` to ``k * n`` partitions, ``(h % (k * n)) % n == h % n``: every key of new partition
``p`` was in old partition ``p % n``, so mapping partition ``p`` to task ``<sub>_<p % n>``
keeps each key with the task that holds its state, and the task count stays ``n``. Any other
change (a count that is not a multiple, a shrink) would split a key's history across tasks,
so it is refused with the reason and what the user can do. Co-partitioned topics of one
sub-topology must have started with the same count: that count is the number of its tasks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import ExpansionRefused
from .ids import task_id


@dataclass(frozen=True, slots=True)
class SourceTopic:
    """A source topic of one sub-topology, with its partition count then and now."""

    name: str
    subtopology: int
    initial_partitions: int
    current_partitions: int


def expand_partitions(topics: Iterable[SourceTopic]) -> dict[str, tuple[str, ...]]:
    """Topic -> the task id of each of its current partitions (index = partition)."""
    mapping: dict[str, tuple[str, ...]] = {}
    task_count: dict[int, tuple[int, str]] = {}
    for topic in topics:
        name, initial, current = topic.name, topic.initial_partitions, topic.current_partitions
        if name in mapping:
            raise ExpansionRefused(f"topic {name!r} is listed twice")
        if topic.subtopology < 0 or initial < 1 or current < 1:
            raise ExpansionRefused(
                f"topic {name!r}: sub-topology and partition counts must be positive "
                f"(got sub-topology {topic.subtopology}, {initial} -> {current} partitions)"
            )
        if current < initial:
            raise ExpansionRefused(
                f"topic {name!r} went from {initial} to {current} partitions: Kafka cannot "
                f"remove partitions, so the topic was recreated and its keys re-spread; keep "
                f"{initial} or a multiple of it, or reset the application (new application.id)"
            )
        if current % initial:
            lower, higher = current // initial * initial, (current // initial + 1) * initial
            raise ExpansionRefused(
                f"topic {name!r} went from {initial} to {current} partitions, which is not a "
                f"multiple of {initial}: keys would move between tasks and lose their state. "
                f"Grow it to a multiple of {initial} (e.g. {higher}"
                + (f" rather than {lower}" if lower > initial else "")
                + "), or reset the application (new application.id) to re-partition its state"
            )
        first = task_count.setdefault(topic.subtopology, (initial, name))
        if first[0] != initial:
            raise ExpansionRefused(
                f"co-partitioned topics of sub-topology {topic.subtopology} disagree: "
                f"{first[1]!r} started with {first[0]} partitions but {name!r} with {initial}; "
                "they must start equal, since that count is the sub-topology's task count"
            )
        mapping[name] = tuple(task_id(topic.subtopology, p % initial) for p in range(current))
    return mapping
