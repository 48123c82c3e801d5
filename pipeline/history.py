"""The simulator's side of the history schema: one :class:`HistoryRecord` per tick.

Recorded and simulated histories are rows of one schema, so a Spark job (later) can
compare them, or replay a recorded one's events as a scenario.
"""

from __future__ import annotations

from .scenario import CopyRecord, HistoryRecord, MemberRecord
from .state import Cluster


def snapshot(c: Cluster, now: float, handovers: int, restored: float) -> HistoryRecord:
    held = c.published.members if c.published else {}
    members = []
    for name in sorted(set(held) | set(c.pods)):
        roles = held.get(name)
        pod = c.pods.get(name)
        state = "member" if roles is not None else "joining"
        if pod is None:
            state = "absent"
        elif not pod.up(now):
            state = "starting"
        members.append(
            MemberRecord(
                name=name,
                state=state,
                active=list(roles.active) if roles else [],
                standby=list(roles.standby) if roles else [],
                learning=list(roles.learning) if roles else [],
            )
        )
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
        members=members,
        copies=copies,
        handovers=handovers,
        bytes_restored=int(restored),
    )
