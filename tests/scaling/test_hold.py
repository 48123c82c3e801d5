"""The held target on sequences of looks (issue 24): within one scale no task moves twice
and no learner switches task, standbys catching up mid-scale included; a target is
planned afresh only for a reason its event names (membership, a stalled learner)."""

from __future__ import annotations

from collections import Counter

from segue.operator.scaling import Plan, Policy

from .sim import Sim

STATEFUL_STANDBY = Policy(acceptable_recovery_lag=10, num_standby_replicas=1)


def owner_changes(sim: Sim, start: int) -> Counter[str]:
    """How often each task changed its active owner in the plans from ``start`` on."""
    changes: Counter[str] = Counter()
    last: dict[str, str] = {}
    for plan in sim.plans[start:]:
        if plan.publish is None:
            continue
        for m, roles in plan.publish.members.items():
            for t in roles.active:
                if t in last and last[t] != m:
                    changes[t] += 1
                last[t] = m
    return changes


def learner_switches(plans: list[Plan]) -> list[str]:
    """A member that stopped learning a task it did not then run: a switched learner."""
    found = []
    previous: dict[str, tuple[set[str], set[str]]] = {}
    for plan in plans:
        if plan.publish is None:
            continue
        for m, roles in plan.publish.members.items():
            learning, active = set(roles.learning), set(roles.active)
            was_learning, _ = previous.get(m, (set(), set()))
            dropped = was_learning - learning - active
            found += [f"{m} dropped {t}" for t in sorted(dropped)]
            previous[m] = (learning, active)
    return found


def test_one_scale_moves_each_task_once_and_no_learner_switches() -> None:
    sim = Sim(replicas=3, rate=150, policy=STATEFUL_STANDBY)
    sim.run()
    start = len(sim.plans)
    sim.replicas = 6
    sim.run(120)
    changes = owner_changes(sim, start)
    assert sum(changes.values()) == 3, changes  # 3 -> 6: one task leaves each old pod
    assert max(changes.values()) == 1, changes
    assert learner_switches(sim.plans[start:]) == []
    assert not sim.events("TargetReplanned")
    settled = sim.plans[-1]
    assert settled.assessment.phase == "Running", settled.assessment
    assert settled.memory.held is None, "settled, yet held"


def test_a_second_scale_mid_way_replans_and_says_why() -> None:
    sim = Sim(replicas=3, rate=100, policy=STATEFUL_STANDBY)
    sim.run()
    sim.replicas = 5
    for _ in range(4):
        sim.step()
    assert sim.memory.held is not None, "no target held mid-scale"
    sim.replicas = 6
    sim.run(120)
    assert sim.events("TargetReplanned")[:1] == ["the target is planned again: membership changed"]


def test_a_learner_without_progress_is_replanned_after_the_stall_time() -> None:
    sim = Sim(replicas=2, rate=200, policy=STATEFUL_STANDBY)
    sim.run()
    sim.replicas = 3
    sim.step()
    sim.pods["wc-2"].stuck = True  # it starts, reports, and never restores a record
    for _ in range(45):
        sim.step()
    said = sim.events("TargetReplanned")
    assert said, [p.events for p in sim.plans[-5:]]
    assert "made no progress for 30s" in said[0], said
    assert "on wc-2" in said[0], said


def test_the_status_names_the_warm_up_bound_when_tasks_wait_for_a_slot() -> None:
    """Four tasks to move, two warm-ups at a time: the other two wait, and the Scaling
    condition says which setting makes them wait."""
    sim = Sim(replicas=2, rate=50)
    sim.run()
    sim.replicas = 6
    messages = []
    for _ in range(12):
        sim.step()
        messages.append(sim.plans[-1].assessment.condition("Scaling").message)
    waiting = [m for m in messages if "maxWarmupReplicas=2 warm up at a time" in m]
    assert waiting, messages
    assert waiting[0].startswith("2 learner(s) restoring, 4 task(s) still to move"), waiting
