"""The simulator's side of the history schema: one :class:`HistoryRecord` per tick.

Recorded and simulated histories are rows of one schema
(:mod:`segue.protocol.history`), so :mod:`.recorded` turns either back into a scenario
and a Spark job can compare them. The simulator knows more than the operator sees;
a row says only what the operator's row says, except ``processed`` (physics keeps
only totals, so a simulated row leaves it unknown).
"""

from __future__ import annotations

from segue.protocol.history import (
    CopyRecord,
    HistoryRecord,
    MemberRecord,
    MemberState,
    SubTopologyRecord,
    TaskRecord,
)
from segue.protocol.tasks import task_sort_key

from .state import Cluster


def snapshot(
    c: Cluster, now: float, handovers: int, restored: float, *, balanced: bool = False
) -> HistoryRecord:
    held = c.published.members if c.published else {}
    members = []
    for name in sorted(set(held) | set(c.pods)):
        roles = held.get(name)
        pod = c.pods.get(name)
        state: MemberState = "member" if roles is not None else "joining"
        if pod is None:
            state = "absent"
        elif not pod.up(now):
            state = "starting"
        members.append(MemberRecord.holding(name, state, roles))
    copies = [
        CopyRecord(
            task=t,
            member=m,
            role=role,
            lag=int(c.lag(c.pods[m], t)) if m in c.pods and c.tasks[t].stateful else 0,
            restore_rate=c.restoring.get((m, t), 0.0),
        )
        for m, r in held.items()
        for role, ts in (("active", r.active), ("standby", r.standby), ("learning", r.learning))
        for t in ts
        if t in c.tasks
    ]
    return HistoryRecord(
        app=c.app,
        time=now,
        spec_replicas=c.replicas,
        generation=c.published.generation if c.published else 0,
        subtopologies=_subtopologies(c),
        members=members,
        copies=copies,
        tasks=[
            TaskRecord(
                task=t,
                changelog_records=round(x.end),
                changelog_bytes=round(x.end * x.record_bytes),
            )
            for t, x in sorted(c.tasks.items(), key=lambda kv: task_sort_key(kv[0]))
            if x.stateful
        ],
        handovers=handovers,
        records_restored=round(_records(c, restored)),
        bytes_restored=round(restored),
        balanced=balanced,
    )


def _subtopologies(c: Cluster) -> list[SubTopologyRecord]:
    tasks: dict[int, int] = {}
    stateful: dict[int, bool] = {}
    for x in c.tasks.values():
        tasks[x.subtopology] = tasks.get(x.subtopology, 0) + 1
        stateful[x.subtopology] = x.stateful
    return [
        SubTopologyRecord(id=s, tasks=n, stateful=stateful[s]) for s, n in sorted(tasks.items())
    ]


def _records(c: Cluster, restored: float) -> float:
    """The records behind ``restored`` bytes: this tick's restore rates weigh each task's
    record size (the tick itself is not handed to a snapshot)."""
    rates = [(rate, c.tasks[t].record_bytes) for (_, t), rate in c.restoring.items()]
    weighed = sum(rate * size for rate, size in rates)
    return restored * sum(rate for rate, _ in rates) / weighed if weighed else 0.0
