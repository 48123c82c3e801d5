"""A template change rolls through the pods one at a time (``maxUnavailable``), and a pod
restarts only once its active tasks have been handed to caught-up copies elsewhere: every
task always has exactly one owner, and no pod goes while it owns anything."""

from __future__ import annotations

from .sim import Sim
from .test_scaling import balanced, one_owner_each


def roll(sim: Sim, steps: int = 200) -> list[str]:
    """Step until the rollout is over; the pods restarted, in order. Checks safety each step."""
    restarted: list[str] = []
    for _ in range(steps):
        before = sim.published
        plan = sim.step()
        one_owner_each(sim.published)
        for name in plan.delete_pods:
            assert before is not None
            assert not before.members[name].active, f"{name} restarted while owning tasks"
            restarted.append(name)
        down = [m for m in sim.published.members if m not in sim.pods or not sim.pods[m].alive]
        assert len(down) <= sim.policy.max_unavailable, down
        progressing = plan.assessment.condition("Progressing")
        if progressing.status == "False" and not plan.busy and plan.publish is None:
            break
    return restarted


def peak_rolling(sim: Sim) -> int:
    """Step through a rollout; the most members rolling at once."""
    peak = 0
    for _ in range(200):
        plan = sim.step()
        one_owner_each(sim.published)
        peak = max(peak, len(plan.memory.rolling))
        if plan.assessment.condition("Progressing").status == "False" and not plan.busy:
            break
    return peak


def test_a_template_change_rolls_one_pod_at_a_time_through_handovers() -> None:
    sim = Sim(replicas=3, rate=500, template="a")
    sim.run()
    assert sim.plans[-1].assessment.condition("Progressing").reason == "UpToDate"
    sim.template = "b"
    plan = sim.step()
    progressing = plan.assessment.condition("Progressing")
    assert (progressing.status, progressing.reason) == ("True", "RollingUpdate")
    assert plan.assessment.updated_replicas == 0
    assert list(plan.memory.rolling) == ["wc-2"]  # the highest ordinal first
    assert plan.delete_pods == ()  # it still owns tasks: they are handed over first
    restarted = roll(sim)
    assert restarted == ["wc-2", "wc-1", "wc-0"]
    assert all(p.template == "b" for p in sim.pods.values())
    sim.run()
    balanced(sim, 3)
    assert sim.plans[-1].assessment.updated_replicas == 3
    assert len(sim.events("RollingUpdate")) == 3
    assert len(sim.events("PodRestarting")) == 3
    assert len(sim.events("RolloutComplete")) == 1
    degraded = [
        c.reason for p in sim.plans for c in p.assessment.conditions if c.type == "Degraded"
    ]
    assert set(degraded) == {"AsExpected"}  # a pod away on purpose is not an absence


def test_at_most_max_unavailable_pods_roll_at_once() -> None:
    sim = Sim(replicas=4, rate=500, template="a").with_policy(max_unavailable=2)
    sim.run()
    sim.template = "b"
    peak = peak_rolling(sim)
    assert peak == 2
    assert all(p.template == "b" for p in sim.pods.values())


def test_a_rollout_waits_for_a_scale_in_flight() -> None:
    sim = Sim(replicas=2, rate=200, template="a")
    sim.run()
    sim.replicas = 3
    sim.template = "b"
    plan = sim.step()  # the scale starts; no pod rolls while it is in flight
    assert not plan.memory.rolling
    assert plan.memory.joining
    roll(sim)
    assert all(p.template == "b" for p in sim.pods.values())
    sim.run()
    balanced(sim, 3)


def test_a_lone_pod_restarts_in_place_and_says_why() -> None:
    sim = Sim(replicas=1, rate=500, template="a")
    sim.run()
    sim.template = "b"
    plan = sim.step()
    assert plan.delete_pods == ("wc-0",)  # nobody to hand over to: it goes with its tasks
    assert any("in place" in m for m in sim.events("RollingUpdate"))
    sim.run()
    assert sim.pods["wc-0"].template == "b"
    balanced(sim, 1)
    degraded = {
        c.reason for p in sim.plans for c in p.assessment.conditions if c.type == "Degraded"
    }
    assert degraded == {"AsExpected"}


def test_someone_always_stays_to_take_the_tasks_over() -> None:
    sim = Sim(replicas=2, rate=500, template="a").with_policy(max_unavailable=5)
    sim.run()
    sim.template = "b"
    peak = peak_rolling(sim)
    assert peak == 1
    assert all(p.template == "b" for p in sim.pods.values())
