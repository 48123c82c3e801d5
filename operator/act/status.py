"""The status patch: the decision core's :class:`~segue.operator.decide.Status` and
:class:`~segue.operator.decide.Memory` in the CRD's shape (``segue.operator.api``).

A JSON merge patch, so maps the machine dropped a key from (a joiner admitted, a
handover done) carry an explicit ``null`` for it. A condition keeps its
``lastTransitionTime`` while its status stays the same, as Kubernetes conventions ask.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from segue.operator.api.names import selector
from segue.operator.decide import Handover, Memory, Plan


def to_time(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_time(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00")).timestamp()


def memory_from_status(status: Mapping[str, Any] | None) -> Memory:
    scaling = (status or {}).get("scaling") or {}
    forced = scaling.get("forcedAt")
    return Memory(
        joining={k: from_time(v) for k, v in (scaling.get("joining") or {}).items() if v},
        leaving={k: from_time(v) for k, v in (scaling.get("leaving") or {}).items() if v},
        absent={k: from_time(v) for k, v in (scaling.get("absent") or {}).items() if v},
        handovers={
            t: Handover(h["to"], from_time(h["since"]))
            for t, h in (scaling.get("handovers") or {}).items()
            if h
        },
        forced_at=from_time(forced) if forced else None,
    )


def status_patch(
    plan: Plan, app: str, previous: Mapping[str, Any] | None, observed_generation: int, now: float
) -> dict[str, Any]:
    previous = previous or {}
    old_scaling = previous.get("scaling") or {}
    memory, status = plan.memory, plan.status
    before = {c.get("type"): c for c in previous.get("conditions") or []}
    conditions = []
    for c in status.conditions:
        old = before.get(c.type)
        since = old["lastTransitionTime"] if old and old.get("status") == c.status else to_time(now)
        conditions.append(
            {
                "type": c.type,
                "status": c.status,
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": since,
                "observedGeneration": observed_generation,
            }
        )
    return {
        "status": {
            "phase": status.phase,
            "replicas": status.replicas,
            "readyReplicas": status.ready_replicas,
            "selector": selector(app),
            "assignmentGeneration": status.generation,
            "maxLag": status.max_lag,
            "observedGeneration": observed_generation,
            "members": [
                {
                    "name": s.name,
                    "role": s.role,
                    "active": s.active,
                    "standby": s.standby,
                    "learning": s.learning,
                    "ready": s.ready,
                    **({"maxLag": s.max_lag} if s.max_lag is not None else {}),
                }
                for s in status.members
            ],
            "conditions": conditions,
            "scaling": {
                "joining": _map(memory.joining, old_scaling.get("joining"), to_time),
                "leaving": _map(memory.leaving, old_scaling.get("leaving"), to_time),
                "absent": _map(memory.absent, old_scaling.get("absent"), to_time),
                "handovers": _map(
                    memory.handovers,
                    old_scaling.get("handovers"),
                    lambda h: {"to": h.to, "since": to_time(h.since)},
                ),
                "forcedAt": to_time(memory.forced_at) if memory.forced_at is not None else None,
            },
        }
    }


def _map(new: Mapping[str, Any], old: Mapping[str, Any] | None, convert: Any) -> dict[str, Any]:
    out: dict[str, Any] = {k: None for k in old or {} if k not in new}
    out.update({k: convert(v) for k, v in new.items()})
    return out
