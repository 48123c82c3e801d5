"""The immediate assignment: KIP-441's handover rules, learners, orphans and the skew cap."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from .reference import View
from .simulate import assign_dict
from .strategies import GONE, requests


def roles(decision: Any) -> tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]]:
    active: dict[str, str] = {}
    standby: dict[str, list[str]] = {}
    learning: dict[str, list[str]] = {}
    for m, held in decision.assignment.items():
        for t in held.active:
            assert t not in active, f"{t} active twice"
            active[t] = m
        for t in held.standby:
            standby.setdefault(t, []).append(m)
        for t in held.learning:
            learning.setdefault(t, []).append(m)
    return active, standby, learning


@given(requests())
def test_immediate_assignment_rules(request: dict[str, Any]) -> None:
    view = View(request)
    decision = assign_dict(request)
    target = {t: m for m, h in decision.target.items() for t in h.active}
    active, standby, learning = roles(decision)
    assert sorted(active) == sorted(view.tasks), "every task runs somewhere"
    budget = request["config"]["max_warmup_replicas"]
    present = set(view.members)
    for t in view.tasks:
        now, aim = active[t], target[t]
        owner = view.owner.get(t)
        holders = [m for m in [now, *standby.get(t, []), *learning.get(t, [])]]
        assert len(holders) == len(set(holders)), f"{t} has two roles on one member"
        assert len(learning.get(t, [])) <= 1
        if learning.get(t):
            assert learning[t] == [aim], "a learner only warms the target owner"
            assert now != aim, "a learner only warms a task still elsewhere"
        if not view.stateful(t):
            assert now == aim, "stateless tasks go straight to the target"
            continue
        if owner in present and now != owner:
            assert now == aim, f"{t} moved somewhere other than its target"
            assert view.caught_up(t, aim), f"{t} moved to a member not caught up"
        if owner not in present:
            assert not view.members[now].get("leaving"), "an orphan went to a leaving member"
    restoring = [t for t, ms in learning.items() if not view.caught_up(t, ms[0])]
    assert len(restoring) <= budget
    stuck = [  # not on the target yet, which is not caught up (orphans included)
        t
        for t in view.tasks
        if view.stateful(t) and active[t] != target[t] and not view.caught_up(t, target[t])
    ]
    if len(restoring) < budget:
        assert all(t in learning for t in stuck), "budget left but a task waits for a learner"
    running = [t for t in stuck if target[t] in view.learners[t]]
    if len(running) <= budget:
        assert all(t in learning for t in running), "a running learner was dropped"
    fresh = [t for t in stuck if t not in running]
    given_ = [t for t in fresh if t in learning]
    if given_ and len(given_) < len(fresh):

        def caught(t: str) -> int:
            return sum(1 for m in view.members if view.caught_up(t, m))

        worst_given = max((caught(t), key(t)) for t in given_)
        best_left = min((caught(t), key(t)) for t in fresh if t not in learning)
        assert worst_given < best_left, "learners not given in priority order"


def key(t: str) -> tuple[int, int]:
    sub, part = t.split("_")
    return int(sub), int(part)


@given(requests())
def test_no_member_exceeds_max_of_before_and_target(request: dict[str, Any]) -> None:
    view = View(request)
    decision = assign_dict(request)
    stateful = {t for t in view.tasks if view.stateful(t)}
    for m, held in decision.assignment.items():
        before = sum(1 for t in stateful if view.owner.get(t) == m)
        target = sum(1 for t in decision.target[m].active if t in stateful)
        now = sum(1 for t in held.active if t in stateful)
        assert now <= max(before, target), f"{m}: {now} > max({before}, {target})"


@given(requests(allow_gone=True))
def test_orphans_go_to_their_most_caught_up_member_with_room(request: dict[str, Any]) -> None:
    view = View(request)
    decision = assign_dict(request)
    active, _, _ = roles(decision)
    stateful = {t for t in view.tasks if view.stateful(t)}
    load = {m: sum(1 for t in h.active if t in stateful) for m, h in decision.assignment.items()}
    limit = {
        m: max(
            sum(1 for t in stateful if view.owner.get(t) == m),
            sum(1 for t in decision.target[m].active if t in stateful),
        )
        for m in decision.assignment
    }
    for t in stateful:
        if view.owner.get(t) != GONE:
            continue
        candidates = [m for m in view.lags[t] if not view.members[m].get("leaving")]
        if not candidates:
            continue
        best = min(view.lags[t][m] for m in candidates)
        now = active[t]
        if view.lags[t].get(now) == best:
            continue
        better = [m for m in candidates if view.lags[t][m] < view.lags[t].get(now, 1 << 62)]
        assert all(load[m] >= limit[m] for m in better), f"{t} skipped a caught-up member"


def test_a_caught_up_standby_on_the_target_is_promoted_at_once() -> None:
    request = {
        "tasks": [{"id": f"0_{p}", "stateful": True} for p in range(4)],
        "members": [{"id": "a"}, {"id": "b"}],
        "current": {"a": {"active": ["0_0", "0_1", "0_2", "0_3"]}, "b": {"standby": ["0_3"]}},
        "lags": {"b": {"0_3": 0}},
    }
    decision = assign_dict(request)
    assert "0_3" in decision.assignment["b"].active
    assert decision.stats.handovers == 1
    assert len(decision.assignment["b"].learning) == 1  # the other move warms up


def test_scale_from_empty_goes_straight_to_the_target() -> None:
    request = {
        "tasks": [{"id": f"0_{p}", "stateful": True} for p in range(6)],
        "members": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
    }
    decision = assign_dict(request)
    assert {m: h.active for m, h in decision.assignment.items()} == {
        m: h.active for m, h in decision.target.items()
    }
    assert decision.stats.learners == 0
    assert decision.stats.rounds_hint == 0
