"""The design documents' worked examples (seeds 000, 001, 003), replayed round by round."""

from __future__ import annotations

from typing import Any

from .reference import View
from .simulate import assign_dict, rounds_to_target, stateful_counts


def tasks(n: int, sub: int = 0, stateful: bool = True) -> list[dict[str, Any]]:
    return [{"id": f"{sub}_{p}", "stateful": stateful} for p in range(n)]


def actives(decision: Any, where: str = "target") -> dict[str, list[str]]:
    source = decision.target if where == "target" else decision.assignment
    return {m: h.active for m, h in source.items()}


def test_seed_001_adding_m3_moves_exactly_two_tasks() -> None:
    request = {
        "tasks": tasks(6),
        "members": [{"id": "m1"}, {"id": "m2"}, {"id": "m3"}],
        "current": {
            "m1": {"active": ["0_0", "0_2", "0_4"]},
            "m2": {"active": ["0_1", "0_3", "0_5"]},
        },
    }
    decision = assign_dict(request)
    assert decision.stats.moves == 2
    assert (
        View(request).active_violations({t: m for m, ts in actives(decision).items() for t in ts})
        == []
    )
    assert len(decision.target["m3"].active) == 2


def wordcount(members: list[str], current: dict[str, list[str]]) -> dict[str, Any]:
    """Seed 003's WordCount: sub-topology 0 stateless, 1 stateful, 6 partitions each."""
    return {
        "tasks": tasks(6, 0, stateful=False) + tasks(6, 1),
        "members": [{"id": m} for m in members],
        "current": {m: {"active": ts} for m, ts in current.items()},
        "config": {"acceptable_recovery_lag": 0, "max_warmup_replicas": 2},
    }


def test_seed_003_c_joining_never_pushes_a_or_b_above_their_count() -> None:
    request = wordcount(
        ["A", "B", "C"],
        {
            "A": ["0_0", "0_2", "0_4", "1_0", "1_2", "1_4"],
            "B": ["0_1", "0_3", "0_5", "1_1", "1_3", "1_5"],
        },
    )
    stateful = {f"1_{p}" for p in range(6)}
    rounds, decisions = rounds_to_target(request)
    for decision in decisions:
        now = stateful_counts(decision, stateful, "assignment")
        assert now["A"] <= 3
        assert now["B"] <= 3
        assert now["C"] <= 2
    final = stateful_counts(decisions[-1], stateful, "target")
    assert final == {"A": 2, "B": 2, "C": 2}
    assert decisions[0].stats.stateful_moves == 2  # the optimum: C takes one from each
    assert rounds <= 2  # two learners at once, then the handover


def test_seed_003_replacing_one_client_moves_only_its_tasks() -> None:
    settled = {
        "A": ["0_0", "0_3", "1_0", "1_3"],
        "B": ["0_1", "0_4", "1_1", "1_4"],
        "C": ["0_2", "0_5", "1_2", "1_5"],
    }
    for replaced in ("A", "B", "C"):
        members = [m for m in "ABC" if m != replaced] + ["D"]  # D sorts last, A first
        current = {m: ts for m, ts in settled.items()}
        decision = assign_dict(wordcount(members, current))
        target = actives(decision)
        assert sorted(target["D"]) == sorted(settled[replaced])
        for m in members:
            if m != "D":
                assert target[m] == settled[m], f"replacing {replaced} moved {m}'s tasks"
        assert decision.stats.moves == 4  # only the gone member's (orphans)


def s000(
    current: dict[str, list[str]],
    members: list[str],
    leaving: tuple[str, ...] = (),
    learning: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Seed 000's tasks T1..T5 as 0_1..0_5 and workers S1..S5."""
    current_map: dict[str, dict[str, list[str]]] = {m: {"active": ts} for m, ts in current.items()}
    for m, ts in (learning or {}).items():
        current_map.setdefault(m, {"active": []})["learning"] = ts
    return {
        "tasks": [{"id": f"0_{p}", "stateful": True} for p in range(1, 6)],
        "members": [{"id": m, "leaving": m in leaving} for m in members],
        "current": current_map,
        "config": {"acceptable_recovery_lag": 0, "max_warmup_replicas": 1},
    }


STABLE = {"S1": ["0_1", "0_2"], "S2": ["0_3", "0_4"], "S3": ["0_5"]}


def test_seed_000_scale_up_ends_balanced_with_minimal_moves() -> None:
    request = s000(STABLE, ["S1", "S2", "S3", "S4", "S5"])
    rounds, decisions = rounds_to_target(request)
    final = actives(decisions[-1])
    assert all(len(ts) == 1 for ts in final.values())
    assert decisions[0].stats.moves == 2  # S1 and S2 each give one task
    assert rounds == 3  # one learner at a time: two warm-ups, then the last handover
    for decision in decisions:  # nobody runs more than before while learners warm up
        counts = {m: len(h.active) for m, h in decision.assignment.items()}
        assert counts["S1"] <= 2
        assert counts["S2"] <= 2
        assert counts["S4"] <= 1


def test_seed_000_scale_down_drains_the_leaving_member() -> None:
    request = s000(STABLE, ["S1", "S2", "S3"], leaving=("S2",))
    first = assign_dict(request)
    assert first.assignment["S2"].active == ["0_3", "0_4"], "S2 keeps working until handover"
    assert first.stats.learners == 1
    rounds, decisions = rounds_to_target(request)
    final = actives(decisions[-1])
    assert final["S2"] == []
    assert sorted(len(ts) for m, ts in final.items() if m != "S2") == [2, 3]
    assert decisions[0].stats.moves == 2  # exactly S2's two tasks
    assert rounds == 3


def test_seed_000_leader_crash_rebalances_at_once() -> None:
    """S1 dies while S4 learns T1: T1 and T2 are orphans nobody holds state for."""
    request = s000(
        {"S1": ["0_1", "0_2"], "S2": ["0_3", "0_4"], "S3": ["0_5"]},
        ["S2", "S3", "S4"],
        learning={"S4": ["0_1"]},
    )
    decision = assign_dict(request)
    assert actives(decision, "assignment") == actives(decision)
    assert "0_1" in decision.target["S4"].active, "the learner's task goes to it"
    assert decision.target["S2"].active == ["0_3", "0_4"]
    assert "0_5" in decision.target["S3"].active
    assert sorted(len(h.active) for h in decision.target.values()) == [1, 2, 2]
    assert decision.stats.learners == 0
