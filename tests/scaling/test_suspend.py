"""`replicas: 0` suspends an app: a generation that releases every task goes out first,
pods go only once they have applied it (offsets committed, stores flushed), claims
follow `state.retention`, and raising replicas resumes it with every task owned."""

from __future__ import annotations

from .sim import Sim
from .test_scaling import balanced, one_owner_each


def conditions(sim: Sim) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in sim.plans[-1].assessment.conditions}


def test_scale_to_zero_hands_every_task_off_before_any_pod_goes_then_resumes() -> None:
    sim = Sim(replicas=2, rate=400)
    sim.run()
    before = sim.published
    assert before is not None
    sim.replicas = 0
    plan = sim.step()
    assert plan.publish is not None  # all tasks released in one generation ...
    assert set(plan.publish.members) == {"wc-0", "wc-1"}
    assert all(not r.tasks() for r in plan.publish.members.values())
    assert plan.delete_pods == ()  # ... and nobody goes before applying it
    assert plan.assessment.phase == "Scaling"
    released = plan.publish.generation
    plan = sim.step()  # both pods applied it: they go, with a last generation of no one
    assert all(sim.pods.get(p) is None for p in ("wc-0", "wc-1"))
    assert plan.publish is not None
    assert dict(plan.publish.members) == {}
    assert plan.publish.generation == released + 1
    assert sorted(plan.delete_pods) == ["wc-0", "wc-1"]
    assert sorted(plan.delete_claims) == ["wc-0", "wc-1"]  # retention Delete (the default)
    # the pods are being deleted, not gone: not Suspended yet, and it says so
    assert plan.assessment.phase == "Scaling"
    assert plan.assessment.condition("Scaling").reason == "Suspending"
    plan = sim.run()
    assert plan.assessment.phase == "Suspended"
    assert plan.assessment.replicas == 0
    assert conditions(sim)["Balanced"] == ("True", "Suspended")
    assert conditions(sim)["Scaling"] == ("False", "Idle")
    assert sim.events("Suspending")
    assert sim.events("Suspended")
    assert not sim.events("ScaleDownTimeout")
    assert not sim.pods

    sim.replicas = 2
    sim.run()
    one_owner_each(sim.published)
    balanced(sim, 2)
    assert any("resume" in m for m in sim.events("ScalingUp"))


def test_suspending_keeps_claims_when_retention_says_so() -> None:
    sim = Sim(replicas=3, rate=1000).with_policy(retain_state=True)
    sim.run()
    sim.replicas = 0
    sim.run()
    assert [c for p in sim.plans for c in p.delete_claims] == []
    assert sim.plans[-1].assessment.phase == "Suspended"


def test_a_pod_that_never_applies_the_release_is_removed_at_the_timeout() -> None:
    sim = Sim(replicas=2, rate=1000).with_policy(scale_down_timeout=5.0)
    sim.run()
    frozen = sim.pods["wc-1"]
    frozen_generation = frozen.generation
    sim.replicas = 0
    for _ in range(12):
        frozen.generation = frozen_generation  # it never applies anything new
        sim.step()
        if "wc-1" not in sim.pods:
            break
    assert "wc-1" not in sim.pods
    assert sim.events("ScaleDownTimeout")
    sim.run()
    assert sim.plans[-1].assessment.phase == "Suspended"


def test_status_replicas_counts_pods_before_they_are_admitted() -> None:
    sim = Sim(replicas=2)
    sim.step()  # pods created
    plan = sim.step()  # they run but have not been admitted yet
    assert plan.assessment.replicas == 2
