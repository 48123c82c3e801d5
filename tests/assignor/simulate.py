"""Feeds each immediate assignment back as the current one, with every learner caught up."""

from __future__ import annotations

from typing import Any

from segue.assignor import Decision
from segue.assignor.replay import assign_dict, at_target, holding, next_request

__all__ = ["assign_dict", "at_target", "next_request"]


def rounds_to_target(
    request: dict[str, Any], limit: int = 50, *, hold: bool = True
) -> tuple[int, list[Decision]]:
    """How many decisions it takes until the assignment is the target, and the decisions.
    ``hold``: the first target is kept, as the operator keeps it (docs/assignor.md,
    "Holding a target"); else every round solves afresh."""
    decisions = []
    kept: dict[str, Any] = {}
    for round_number in range(1, limit + 1):
        decision = assign_dict({**request, **kept})
        decisions.append(decision)
        if at_target(decision):
            return round_number, decisions
        if hold and not kept:
            kept = holding(decision)
        request = next_request(request, decision)
    raise AssertionError(f"no convergence in {limit} rounds")


def stateful_counts(decision: Decision, stateful: set[str], which: str) -> dict[str, int]:
    source = decision.assignment if which == "assignment" else decision.target
    return {m: sum(1 for t in h.active if t in stateful) for m, h in source.items()}
