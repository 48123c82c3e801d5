"""The history record of one reconcile step: what the app looked like and what changed.

Pure: built from the step's :class:`World`, the :class:`Plan` carried out and the
workers' scraped counters, against :class:`Seen`, what the last recorded row of the
app was built from (rates and deltas are since that row, so an app's
``bytes_restored`` add up to everything its copies restored while it was recorded).
A step is recorded only if it changed something: the generation, the spec's replicas,
the members, their states or roles, the pods (the plan created or deleted one) or
restore progress. ``segue.operator.act.history`` sends the rows; the schema is
``segue.protocol.history``; docs/operator.md, "History".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from segue.operator.observe.scrape import WorkerReport
from segue.operator.scaling import Plan, Published, World
from segue.operator.scaling.inventory import Inventory, take_inventory
from segue.operator.scaling.placement import lags, task_lag
from segue.operator.scaling.roster import ready_to_join
from segue.protocol.history import (
    CopyRecord,
    HistoryRecord,
    MemberRecord,
    MemberState,
    SubTopologyRecord,
    TaskRecord,
)
from segue.protocol.tasks import TaskId, task_sort_key

Counters = Mapping[tuple[str, str], tuple[int, int, int]]  # (pod, task) -> records, bytes, done


@dataclass(frozen=True)
class Seen:
    """The last recorded row's time, its change signature, and the counters it read."""

    time: float
    signature: tuple[object, ...]
    counters: Counters


def step_record(
    namespace: str,
    world: World,
    plan: Plan,
    reports: Mapping[str, WorkerReport],
    seen: Seen | None,
) -> tuple[HistoryRecord | None, Seen | None]:
    """This step's row, or None if it changed nothing; and the ``Seen`` to keep."""
    after = plan.publish or world.published
    counters = _counters(world, reports, seen)
    before = seen.counters if seen else {}
    delta = {k: _since(v, before.get(k)) for k, v in counters.items()}
    members = _members(world, plan, after)
    inventory = (
        take_inventory(world.subtopologies, world.partitions, world.published)
        if world.subtopologies is not None
        else None
    )
    dt = world.now - seen.time if seen else 0.0
    copies = _copies(world, after, inventory=inventory, reports=reports, delta=delta, dt=dt)
    signature = (
        after.generation if after else 0,
        world.replicas,
        tuple(
            (m.name, m.state, tuple(m.active), tuple(m.standby), tuple(m.learning)) for m in members
        ),
        tuple((c.task, c.member, c.lag == 0) for c in copies),  # a copy caught up
        _balanced(plan),
    )
    restored = sum(d[0] for d in delta.values())
    acted = plan.publish is not None or plan.create_pods or plan.delete_pods
    if seen is not None and signature == seen.signature and not restored and not acted:
        return None, seen
    row = HistoryRecord(
        namespace=namespace,
        app=world.app,
        time=world.now,
        spec_replicas=world.replicas,
        generation=after.generation if after else 0,
        subtopologies=_subtopologies(inventory),
        members=members,
        copies=copies,
        tasks=_tasks(inventory, reports, delta if seen else None),
        handovers=handovers(world.published, plan.publish),
        records_restored=restored,
        bytes_restored=sum(d[1] for d in delta.values()),
        balanced=_balanced(plan),
    )
    return row, Seen(world.now, signature, counters)


def _balanced(plan: Plan) -> bool:
    return plan.assessment.condition("Balanced").status == "True"


def handovers(before: Published | None, after: Published | None) -> int:
    """Tasks whose active owner changed (a task new to the assignment moved nowhere)."""
    if before is None or after is None:
        return 0
    old = {t: m for m, r in before.members.items() for t in r.active}
    return sum(1 for m, r in after.members.items() for t in r.active if old.get(t, m) != m)


def _counters(world: World, reports: Mapping[str, WorkerReport], seen: Seen | None) -> Counters:
    """Each live pod's restore and processing counters: scraped now, else as last seen."""
    out = {k: v for k, v in (seen.counters if seen else {}).items() if k[0] in world.pods}
    for pod, r in reports.items():
        for task in {*r.restored_records, *r.processed}:
            out[(pod, task)] = (
                r.restored_records.get(task, 0),
                r.restored_bytes.get(task, 0),
                r.processed.get(task, 0),
            )
    return out


def _since(now: tuple[int, int, int], then: tuple[int, int, int] | None) -> tuple[int, ...]:
    """Counter increases; a counter that went down restarted with its pod: all of it is new."""
    if then is None:
        return now
    return tuple(n - t if n >= t else n for n, t in zip(now, then, strict=True))


def _members(world: World, plan: Plan, after: Published | None) -> list[MemberRecord]:
    held = after.members if after else {}
    leaving = {*world.memory.leaving, *plan.memory.leaving}
    out = []
    for name in sorted(set(held) | set(world.pods)):
        pod, roles = world.pods.get(name), held.get(name)
        state: MemberState = "member" if roles is not None else "joining"
        if pod is None:
            state = "absent"
        elif pod.terminating or name in leaving:
            state = "leaving"
        elif not (pod.running and pod.reporting) or (
            roles is None and not ready_to_join(pod, world.published)
        ):
            state = "starting"  # not ready to join: it has not read the assignment yet
        out.append(MemberRecord.holding(name, state, roles))
    return out


def _copies(
    world: World,
    after: Published | None,
    *,
    inventory: Inventory | None,
    reports: Mapping[str, WorkerReport],
    delta: Mapping[tuple[str, str], tuple[int, ...]],
    dt: float,
) -> list[CopyRecord]:
    """Each copy's lag as the operator computes it, except that an active its worker runs
    is current (the offsets past its store are its transactions' commit markers), and a
    copy its worker reports no offsets for yet is behind by its whole changelog."""
    held = after.members if after else {}
    behind = lags(world, inventory, held) if inventory else {}

    def lag(m: str, t: str) -> int:
        if t in behind.get(m, {}):
            return behind[m][t]
        return (task_lag(world, inventory, t, {}) if inventory else None) or 0

    def running(m: str, t: str) -> bool:
        report = reports.get(m)
        return report is not None and report.states.get(t) == "running"

    return [
        CopyRecord(
            task=t,
            member=m,
            role=role,
            lag=0 if role == "active" and running(m, t) else lag(m, t),
            restore_rate=delta.get((m, t), (0,))[0] / dt if dt > 0 else 0.0,
        )
        for m, r in sorted(held.items())
        for role, ts in (("active", r.active), ("standby", r.standby), ("learning", r.learning))
        for t in ts
    ]


def _subtopologies(inventory: Inventory | None) -> list[SubTopologyRecord]:
    subs: dict[int, list[bool]] = {}
    for task, stateful in (inventory.tasks if inventory else {}).items():
        subs.setdefault(TaskId.parse(task).subtopology, []).append(stateful)
    return [SubTopologyRecord(id=s, tasks=len(f), stateful=any(f)) for s, f in sorted(subs.items())]


def _tasks(
    inventory: Inventory | None,
    reports: Mapping[str, WorkerReport],
    delta: Mapping[tuple[str, str], tuple[int, ...]] | None,
) -> list[TaskRecord]:
    """Per task: its changelog as the copy that holds most of it counts it, and the input
    its actives processed since the last row (None on an app's first row)."""
    out = []
    for task in sorted(inventory.tasks if inventory else (), key=task_sort_key):
        held = max(
            (
                (r.changelog_records.get(task, 0), r.changelog_bytes.get(task, 0))
                for r in reports.values()
            ),
            default=(0, 0),
        )
        done = sum(d[2] for (_, t), d in delta.items() if t == task) if delta is not None else None
        if inventory and inventory.tasks[task]:
            out.append(
                TaskRecord(
                    task=task, changelog_records=held[0], changelog_bytes=held[1], processed=done
                )
            )
        elif done is not None:
            out.append(
                TaskRecord(task=task, changelog_records=0, changelog_bytes=0, processed=done)
            )
    return out
