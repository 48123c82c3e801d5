"""Replaying a decision as the next generation, every copy caught up.

The convergence tests, the benchmark against Kafka's assignor and the what-if
simulator all need the same step: run the immediate assignment, let every
learner and standby (and each former owner's copy) catch up, and ask again.
Pure: a request dict in, the next request dict out.
"""

from __future__ import annotations

from typing import Any

from segue.assignor.model import AssignRequest, Decision
from segue.assignor.solve import assign


def assign_dict(request: dict[str, Any]) -> Decision:
    return assign(AssignRequest.model_validate(request))


def at_target(decision: Decision) -> bool:
    """True when what runs now is the target and nothing is still learning."""
    return all(
        held.active == decision.target[m].active
        and held.standby == decision.target[m].standby
        and not held.learning
        for m, held in decision.assignment.items()
    )


def holding(decision: Decision) -> dict[str, Any]:
    """Request fields that keep ``decision``'s target (actives and standbys), as the
    scaling state machine holds a target while its learners progress (``.hold``)."""
    standbys: dict[str, list[str]] = {}
    for m, target in decision.target.items():
        for t in target.standby:
            standbys.setdefault(t, []).append(m)
    actives = {t: m for m, target in decision.target.items() for t in target.active}
    return {"hold": actives, "hold_standbys": standbys}


def next_request(
    request: dict[str, Any], decision: Decision, *, drop_departed: bool = False
) -> dict[str, Any]:
    """The next generation: the assignment runs and every local copy is fresh.

    ``drop_departed`` removes leaving members that no longer run an active task,
    as the operator deletes their pods.
    """
    previous = {
        t: m for m, held in request.get("current", {}).items() for t in held.get("active", [])
    }
    lags: dict[str, dict[str, int]] = {}
    for m, held in decision.assignment.items():
        for t in [*held.standby, *held.learning]:
            lags.setdefault(m, {})[t] = 0
        for t in held.active:
            old = previous.get(t)
            if old is not None and old != m and old in decision.assignment:
                lags.setdefault(old, {})[t] = 0  # the former owner's copy is still fresh
    current = {
        m: {"active": list(h.active), "standby": list(h.standby), "learning": list(h.learning)}
        for m, h in decision.assignment.items()
    }
    nxt = {**request, "current": current, "lags": lags}
    if drop_departed:
        nxt["members"] = [
            m for m in request["members"] if not m.get("leaving") or current[m["id"]]["active"]
        ]
    return nxt
