"""Resolve a topology against the cluster's topics: task counts, internal topics.

Pure: given the partition counts the worker read from the broker's metadata and
the assignment's ``partition_map``, it decides how many tasks each sub-topology
has, which source partitions exist, and which internal topics (repartition,
changelog, dead letter) must exist with how many partitions. A sub-topology that
cannot run (a missing source topic, sources that are not co-partitioned, a
changelog of the wrong size) gets an ``error``: its tasks are kept as failed,
reported with that reason and retried (``taskset``); the others run. ``kafka``
creates the topics this asks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from segue.protocol.reports import AssignmentErrorReason
from segue.protocol.tasks import Expansion, copartitioning_error, task_count
from segue.worker.topology import Topology

CHANGELOG_CONFIG = {"cleanup.policy": "compact"}


@dataclass(frozen=True)
class SubError:
    reason: AssignmentErrorReason  # also counted as segue_assignment_errors_total's reason
    message: str


@dataclass(frozen=True)
class ResolvedSub:
    id: int
    tasks: int = 0
    sources: dict[str, int] = field(default_factory=dict)  # topic -> partitions seen
    expansion: Expansion | None = None
    error: SubError | None = None


@dataclass(frozen=True)
class InternalTopic:
    name: str
    partitions: int
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolution:
    subs: dict[int, ResolvedSub]
    create: list[InternalTopic]  # internal topics that are missing


def _missing(topics: list[str]) -> str:
    if len(topics) == 1:
        return f"topic {topics[0]} does not exist"
    return f"topics {', '.join(topics)} do not exist"


def dead_letter_topic(application_id: str) -> str:
    return f"{application_id}-dead-letter"


def resolve(
    topology: Topology,
    application_id: str,
    partitions: Mapping[str, int],
    expansions: Mapping[int, Expansion],
) -> Resolution:
    """``partitions``: topic -> partition count for every topic that exists."""
    subs: dict[int, ResolvedSub] = {}
    create: dict[str, InternalTopic] = {}
    planned: dict[str, int] = dict(partitions)  # existing plus to be created
    for sub in topology.subtopologies:
        counts: dict[str, int] = {}
        missing: list[str] = []
        for source in sub.sources:
            name = source.topic(application_id)
            if name in planned:
                counts[name] = planned[name]
            elif source.internal:
                writer = subs.get(topology.writer_of(source.name).id)
                size = source.partitions or (writer.tasks if writer else 0)
                if size <= 0:
                    missing.append(name)
                    continue
                create[name] = InternalTopic(name, size)
                planned[name] = counts[name] = size
            else:
                missing.append(name)
        missing += [
            sink.name for sink in sub.sinks if not sink.internal and sink.name not in planned
        ]
        expansion = expansions.get(sub.id)
        if missing:
            subs[sub.id] = ResolvedSub(
                sub.id, error=SubError(AssignmentErrorReason.MISSING_TOPIC, _missing(missing))
            )
            continue
        mismatch = copartitioning_error(counts)
        if mismatch is not None:
            subs[sub.id] = ResolvedSub(
                sub.id, error=SubError(AssignmentErrorReason.COPARTITIONING, mismatch)
            )
            continue
        tasks = task_count(next(iter(counts.values())), expansion)
        error: SubError | None = None
        existing = [
            planned[s.changelog(application_id)]
            for s in sub.stores
            if s.changelog(application_id) in planned
        ]
        if expansion is None and existing and min(existing) < tasks:
            # The sources grew but the operator has not published a partition_map
            # yet: the task count never changes, so keep the old tasks and leave the
            # new partitions unread until it does (seed 004).
            tasks = min(existing)
        for store in sub.stores:
            changelog = store.changelog(application_id)
            if changelog not in planned:
                create[changelog] = InternalTopic(changelog, tasks, CHANGELOG_CONFIG)
                planned[changelog] = tasks
            elif planned[changelog] != tasks:
                error = SubError(
                    AssignmentErrorReason.CHANGELOG_PARTITIONS,
                    f"changelog {changelog} has {planned[changelog]} partitions, "
                    f"sub-topology {sub.id} has {tasks} tasks",
                )
        if sub.on_error == "dead_letter":
            dlq = dead_letter_topic(application_id)
            if dlq not in planned:
                create[dlq] = InternalTopic(dlq, 1)
                planned[dlq] = 1
        subs[sub.id] = ResolvedSub(sub.id, tasks, counts, expansion, error)
        for sink in sub.sinks:
            name = sink.topic(application_id)
            if sink.internal and name not in planned:
                create[name] = InternalTopic(name, sink.partitions or tasks)
                planned[name] = sink.partitions or tasks
    return Resolution(subs, list(create.values()))


def first_topics(
    topology: Topology, application_id: str, partitions: Mapping[str, int]
) -> list[InternalTopic]:
    """The internal topics a new application makes as its workers start: with its
    repartition topics in place, the operator's first generation counts every
    sub-topology's tasks (otherwise it places only those whose sources exist, and a
    second generation follows once a worker made the rest). An application that has
    state (a changelog exists) makes none here: the sizes of its topics follow its
    generation's partition map, so they wait for the generation."""
    stores = {s.changelog(application_id) for sub in topology.subtopologies for s in sub.stores}
    if stores & set(partitions):
        return []
    return resolve(topology, application_id, partitions, {}).create
