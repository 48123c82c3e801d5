"""Feeding assignments back converges within ceil(moves / warmups) + 1 rounds; targets hold."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from .reference import View, total_active_cost
from .simulate import assign_dict, at_target, next_request, rounds_to_target, stateful_counts


@st.composite
def scalings(draw: st.DrawFn) -> dict[str, Any]:
    """A balanced group, then members join, leave, or vanish."""
    subs = draw(st.integers(1, 3))
    tasks = []
    for sub in range(subs):
        stateful = draw(st.booleans())
        tasks += [
            {"id": f"{sub}_{p}", "stateful": stateful} for p in range(draw(st.integers(1, 8)))
        ]
    before = draw(st.integers(1, 5))
    settled = assign_dict(
        {
            "tasks": tasks,
            "members": [{"id": f"m-{i}"} for i in range(before)],
            "config": {"num_standby_replicas": draw(st.integers(0, 1))},
        }
    )
    members: list[dict[str, Any]] = [{"id": f"m-{i}"} for i in range(before)]
    change = draw(st.sampled_from(["join", "leave", "vanish", "replace"]))
    if change == "join":
        members += [{"id": f"m-{before + i}"} for i in range(draw(st.integers(1, 3)))]
    elif change == "leave" and before > 1:
        for m in draw(st.sets(st.integers(1, before - 1), min_size=1)):
            members[m]["leaving"] = True
    elif change == "vanish" and before > 1:
        gone = draw(st.integers(0, before - 1))
        members = [m for i, m in enumerate(members) if i != gone]
    elif change == "replace":
        members[draw(st.integers(0, before - 1))] = {"id": "z-new"}
    current = {
        m: {"active": h.active, "standby": h.standby, "learning": []}
        for m, h in settled.assignment.items()
    }
    lags = {
        m: {t: 0 for t in h.standby}
        for m, h in settled.assignment.items()
        if any(x["id"] == m for x in members)
    }
    return {
        "tasks": tasks,
        "members": members,
        "current": current,
        "lags": {m: v for m, v in lags.items() if v},
        "config": {
            "num_standby_replicas": settled.stats.standby_replicas,
            "max_warmup_replicas": draw(st.integers(1, 3)),
            "acceptable_recovery_lag": 0,
        },
    }


@given(scalings())
def test_converges_within_the_bound_and_never_skews(request: dict[str, Any]) -> None:
    first = assign_dict(request)
    budget = request["config"]["max_warmup_replicas"]
    rounds, decisions = rounds_to_target(request)
    assert rounds <= math.ceil(first.stats.moves / budget) + 1
    stateful = {t["id"] for t in request["tasks"] if t["stateful"]}
    before = {
        m: sum(1 for t in h["active"] if t in stateful) for m, h in request["current"].items()
    }
    for decision in decisions:
        now = stateful_counts(decision, stateful, "assignment")
        target = stateful_counts(decision, stateful, "target")
        for m, count in now.items():
            assert count <= max(before.get(m, 0), target[m]), f"{m} skewed to {count}"


@given(scalings())
def test_the_target_does_not_flip_flop(request: dict[str, Any]) -> None:
    """A later target abandons a learner only for a strictly cheaper one, never on a tie."""
    decisions = []
    for _ in range(20):
        decision = assign_dict(request)
        if decisions:
            before = decisions[-1]
            view = View(request)
            old = {t: m for m, h in before.target.items() for t in h.active}
            new = {t: m for m, h in decision.target.items() for t in h.active}
            if total_active_cost(view, old)[:2] == total_active_cost(view, new)[:2]:
                for m, held in before.assignment.items():
                    for t in held.learning:
                        assert new[t] == m, f"{t} left its learner on {m} on a tie"
        decisions.append(decision)
        if at_target(decision):
            return
        request = next_request(request, decision)


@given(scalings())
def test_a_balanced_target_fed_back_is_a_fixed_point(request: dict[str, Any]) -> None:
    _, decisions = rounds_to_target(request)
    final = decisions[-1]
    again = assign_dict(next_request(request | {"current": request["current"]}, final))
    assert at_target(again)
    assert {m: h.active for m, h in again.target.items()} == {
        m: h.active for m, h in final.target.items()
    }
    assert again.stats.moves == 0
    assert again.stats.handovers == 0
