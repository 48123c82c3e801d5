"""Feeds each immediate assignment back as the current one, with every learner caught up."""

from __future__ import annotations

from typing import Any

from segue.assignor import AssignRequest, Decision, assign


def decide(request: dict[str, Any]) -> Decision:
    return assign(AssignRequest.model_validate(request))


def at_target(decision: Decision) -> bool:
    return all(
        held.active == decision.target[m].active
        and held.standby == decision.target[m].standby
        and not held.learning
        for m, held in decision.assignment.items()
    )


def next_request(request: dict[str, Any], decision: Decision) -> dict[str, Any]:
    """The next generation: the assignment runs, learners and standbys have caught up."""
    lags: dict[str, dict[str, int]] = {}
    previous = {t: m for m, held in request.get("current", {}).items() for t in held["active"]}
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
    return {**request, "current": current, "lags": lags}


def rounds_to_target(request: dict[str, Any], limit: int = 50) -> tuple[int, list[Decision]]:
    """How many decisions it takes until the assignment is the target, and the decisions."""
    decisions = []
    for round_number in range(1, limit + 1):
        decision = decide(request)
        decisions.append(decision)
        if at_target(decision):
            return round_number, decisions
        request = next_request(request, decision)
    raise AssertionError(f"no convergence in {limit} rounds")


def stateful_counts(decision: Decision, stateful: set[str], which: str) -> dict[str, int]:
    source = decision.assignment if which == "assignment" else decision.target
    return {m: sum(1 for t in h.active if t in stateful) for m, h in source.items()}
