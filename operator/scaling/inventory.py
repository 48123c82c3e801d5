"""The task set of an application, and partition expansion (seed 004).

A sub-topology has one task per partition of its (co-partitioned) sources. A
stateful sub-topology's task count is fixed for life, because each task owns a
changelog partition: when its sources grow to a multiple of that count, the
assignor's expansion rule (:func:`segue.assignor.expand_partitions`) maps the new
partitions back onto the same tasks, and the new mapping is published as the
document's ``partition_map``; any other change is refused and the old mapping keeps
running. Stateless sub-topologies simply gain tasks. Pure: partition counts in,
tasks and degradations out; :mod:`.core` turns degradations into conditions and events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from segue.assignor import ExpansionRefused, SourceTopic, expand_partitions
from segue.protocol.tasks import Expansion, task_id
from segue.protocol.topology import SubTopologyDescription

from .model import Published, World


@dataclass(frozen=True)
class Degradation:
    reason: str  # a Degraded condition reason
    message: str


@dataclass(frozen=True)
class Inventory:
    tasks: dict[str, bool]  # task id -> stateful
    stores: dict[str, tuple[tuple[str, str], ...]]  # task id -> (store, changelog topic)
    partition_map: dict[int, Expansion]
    expanded: list[str] = field(default_factory=list)  # messages for PartitionsExpanded
    degradations: list[Degradation] = field(default_factory=list)
    # Memos of one look (the world this was taken from): each task's changelog ends and
    # each member's lags, asked for by the request, the hold and the status alike.
    ends: dict[str, tuple[tuple[str, int], ...] | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    lags: dict[str, dict[str, int]] = field(default_factory=dict, compare=False, repr=False)


def take_inventory(
    subtopologies: tuple[SubTopologyDescription, ...],
    partitions: Mapping[str, int],
    published: Published | None,
) -> Inventory:
    """Tasks of every sub-topology; a broken one keeps the tasks it was last published with."""
    old_map = dict(published.partition_map) if published else {}
    result = Inventory({}, {}, {})
    for sub in subtopologies:
        count = _count(sub, partitions, old_map, result)
        if count is None:
            count = _published_count(sub.id, published)
        stores = tuple(zip(sub.stores, sub.changelog_topics, strict=True))
        for p in range(count):
            tid = task_id(sub.id, p)
            result.tasks[tid] = sub.stateful
            result.stores[tid] = stores
    return result


def _count(
    sub: SubTopologyDescription,
    partitions: Mapping[str, int],
    old_map: dict[int, Expansion],
    out: Inventory,
) -> int | None:
    missing = [t for t in sub.source_topics if t not in partitions]
    if missing:
        if set(missing) - set(sub.repartition_sources):
            out.degradations.append(
                Degradation(
                    "SourceTopicMissing",
                    f"sub-topology {sub.id}: source topic(s) {', '.join(sorted(missing))} "
                    "do not exist; its tasks keep their last assignment",
                )
            )
        return None  # a repartition topic the application has not created yet
    counts = {t: partitions[t] for t in sub.source_topics}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
        out.degradations.append(
            Degradation(
                "NotCopartitioned",
                f"sub-topology {sub.id}: source topics differ in partition count ({listed})",
            )
        )
        return None
    current = next(iter(counts.values()))
    if not sub.stateful:
        return current
    previous = old_map.get(sub.id)
    changelogs = [partitions[c] for c in sub.changelog_topics if c in partitions]
    if previous is not None:
        initial = previous.initial
    elif changelogs:
        initial = min(changelogs)  # the task count the state was built with
    else:
        return current  # a new application: its changelogs will have ``current`` partitions
    if current == initial:
        return initial
    try:
        expand_partitions(SourceTopic(t, sub.id, initial, current) for t in sub.source_topics)
    except ExpansionRefused as refused:
        out.degradations.append(Degradation("PartitionExpansionRefused", str(refused)))
        if previous is not None:
            out.partition_map[sub.id] = previous
        return initial
    out.partition_map[sub.id] = Expansion(initial, current)
    if previous != out.partition_map[sub.id]:
        was = previous.current if previous else initial
        out.expanded.append(
            f"sub-topology {sub.id}: {was} -> {current} source partitions, "
            f"still {initial} tasks (partition p goes to task {sub.id}_<p mod {initial}>)"
        )
    return initial


def _published_count(sub: int, published: Published | None) -> int:
    if published is None:
        return 0
    prefix = f"{sub}_"
    ids = {
        int(t[len(prefix) :])
        for roles in published.members.values()
        for t in roles.tasks()
        if t.startswith(prefix)
    }
    return max(ids) + 1 if ids else 0


def inventory_of(world: World) -> Inventory:
    """The task set of this look: from the topology the pods report, else (unknown yet)
    the tasks the published assignment names, with why it is unknown."""
    if world.subtopologies is not None:
        return take_inventory(world.subtopologies, world.partitions, world.published)
    held = world.published.members.values() if world.published else ()
    tasks = {t: True for r in held for t in r.tasks()}
    why = world.topology_error or "no pod has reported it yet"
    return Inventory(
        tasks,
        {t: () for t in tasks},
        dict(world.published.partition_map) if world.published else {},
        degradations=[
            Degradation("TopologyUnknown", f"the application's topology is unknown: {why}")
        ]
        if world.published is not None or world.topology_error
        else [],
    )
