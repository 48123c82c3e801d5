"""Tasks a member reports it cannot run: Degraded with the reason and the tasks, faults per
member in the status, no wait on a learner that restores nothing, recovery once fixed."""

from __future__ import annotations

import itertools

from segue.operator.scaling import TaskFault

from .sim import Sim

MISSING = TaskFault("TopicMissing", "output topic 'counts' does not exist")


def degraded(sim: Sim) -> tuple[str, str]:
    plan = sim.plans[-1]
    condition = plan.assessment.condition("Degraded")
    return condition.status, condition.reason


def test_a_task_that_cannot_run_is_degraded_with_the_reason_and_the_tasks() -> None:
    sim = Sim(replicas=2)
    sim.run()
    owners = sim.owners()
    for t in ("0_0", "0_1"):
        sim.pods[owners[t]].faults[t] = MISSING
    plan = sim.step()
    condition = plan.assessment.condition("Degraded")
    assert (condition.status, condition.reason) == ("True", "TopicMissing")
    assert "0_0" in condition.message
    assert "0_1" in condition.message
    assert "'counts' does not exist" in condition.message
    assert plan.assessment.phase == "Degraded"
    faulted = {m.name: dict(m.faults) for m in plan.assessment.members if m.faults}
    expected: dict[str, dict[str, TaskFault]] = {}
    for t in ("0_0", "0_1"):
        expected.setdefault(owners[t], {})[t] = MISSING
    assert faulted == expected
    assert [e.reason for e in plan.events if e.type == "Warning"] == ["TopicMissing"]
    assert not [e for e in sim.step().events if e.type == "Warning"]  # said once

    # Fixed: the worker's retry runs the tasks, the report goes, so does the reason.
    for pod in sim.pods.values():
        pod.faults.clear()
    sim.run()
    assert degraded(sim) == ("False", "AsExpected")


def test_a_learner_that_cannot_run_is_said_and_does_not_hold_the_batch() -> None:
    sim = Sim(replicas=2, rate=300).with_policy(learner_promotion="batch")
    sim.run()
    sim.replicas = 3
    learning: tuple[str, ...] = ()
    for _ in range(10):
        sim.step()
        held = sim.published.members.get("wc-2") if sim.published else None
        if held is not None and held.learning:
            learning = held.learning
            break
    assert len(learning) >= 2
    stuck = learning[0]
    sim.pods["wc-2"].faults[stuck] = MISSING
    for _ in range(15):
        plan = sim.step()
    scaling = plan.assessment.condition("Scaling")
    assert "1 learner(s) cannot run" in scaling.message
    assert plan.assessment.condition("Degraded").reason == "TopicMissing"
    # The others were handed over without waiting for the one that restores nothing.
    assert sim.published is not None
    assert set(sim.published.members["wc-2"].active) == set(learning) - {stuck}
    assert stuck in sim.published.members["wc-2"].learning

    # Fixed: it restores, is promoted and the scale ends balanced.
    sim.pods["wc-2"].faults.clear()
    sim.run()
    assert degraded(sim) == ("False", "AsExpected")
    assert sorted(len(r.active) for r in sim.published.members.values()) == [2, 2, 2]
    assert sim.owners()[stuck] == "wc-2"


FENCED = TaskFault("Fenced", "task 0_0: fenced during flush: This instance has been fenced")


def test_a_task_fenced_on_its_owner_is_published_again_once_no_worker_is_behind() -> None:
    """An owner on an older generation fenced the rightful one and let go (after a
    broker restart, tests/faults/test_restart.py): the same roles, published again as
    a newer generation, make the rightful owner start the task afresh."""
    from dataclasses import replace

    from segue.operator.scaling import decide

    sim = Sim(replicas=2)
    sim.run()
    assert sim.published is not None
    before = sim.published
    owner = sim.owners()["0_0"]
    sim.pods[owner].faults["0_0"] = FENCED

    # Not while some worker is behind: it may be the one that fenced, still owning.
    world = sim.world()
    other = next(m for m in world.pods if m != owner)
    behind = replace(world.pods[other], generation=before.generation - 1)
    assert decide(replace(world, pods={**world.pods, other: behind})).publish is None

    plan = sim.step()
    assert plan.publish is not None
    assert plan.publish.generation == before.generation + 1
    assert dict(plan.publish.members) == dict(before.members)  # the same roles
    sim.pods[owner].faults.clear()  # started afresh: running
    sim.run()
    assert sim.published.generation == before.generation + 1  # once, not again


def test_a_task_fenced_again_and_again_is_published_again_at_most_every_backoff() -> None:
    """A zombie that keeps fencing the rightful owner costs one generation per
    ``REFENCE_BACKOFF``, not one per step; Degraded names the task and its member all
    along, and a TaskFenced warning says each time it was published again."""
    from segue.operator.scaling.publication import REFENCE_BACKOFF

    sim = Sim(replicas=2)
    sim.run()
    assert sim.published is not None
    owner, roles = sim.owners()["0_0"], dict(sim.published.members)
    sim.pods[owner].faults["0_0"] = FENCED  # and it stays so: fenced again each time
    start = sim.now
    generations: list[tuple[float, int]] = []
    warnings: list[str] = []
    while sim.now - start < 2.5 * REFENCE_BACKOFF:
        plan = sim.step()
        if plan.publish is not None:
            generations.append((sim.now - start, plan.publish.generation))
        warnings += [e.message for e in plan.events if e.reason == "TaskFenced"]
        condition = plan.assessment.condition("Degraded")
        assert (condition.status, condition.reason) == ("True", "Fenced")
        assert f"{owner} (0_0)" in condition.message
    assert len(generations) == 3, generations  # at once, after 30 s, after 60 s
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(generations)]
    assert all(gap >= REFENCE_BACKOFF for gap in gaps), gaps
    assert len(warnings) == 3
    assert f"0_0 was fenced on {owner}" in warnings[0]
    assert dict(sim.published.members) == roles  # the same roles each time

    # The zombie is gone: the owner starts it afresh and no generation follows.
    sim.pods[owner].faults.clear()
    last = sim.published.generation
    sim.run()
    assert sim.published.generation == last
    assert degraded(sim) == ("False", "AsExpected")
