"""Placed is not running: a handover is done, and the app ``Balanced``, only once the new
owner *runs* the task. A worker reports the task's role ``active`` while it still waits
to fence the previous owner (``starting``) and while it restores the store's tail
(``restoring``); neither processes a record."""

from __future__ import annotations

from dataclasses import replace

from segue.operator.scaling import Plan, World, decide

from .sim import Sim
from .test_scaling import balanced


def handing_over() -> tuple[Sim, str, str]:
    """A 1 -> 2 scale-up at its last handover: nothing else in flight; the task and its
    new owner."""
    sim = Sim(replicas=1)
    sim.run()
    sim.replicas = 2
    for _ in range(30):
        plan = sim.step()
        if plan.memory.handovers and not plan.learners:
            ((task, handover),) = plan.memory.handovers.items()
            return sim, task, handover.to
    raise AssertionError("no last handover")


def seen(world: World, member: str, **changes: object) -> World:
    """``world`` with ``member``'s pod observed otherwise."""
    pod = replace(world.pods[member], **changes)  # type: ignore[arg-type]
    return replace(world, pods={**world.pods, member: pod})


def still_handing_over(plan: Plan, task: str, member: str) -> None:
    assert task in plan.memory.handovers
    assert task not in dict(plan.handovers_done)
    assert plan.busy
    assert plan.assessment.phase == "Scaling"
    scaling = plan.assessment.condition("Scaling")
    assert (scaling.status, scaling.reason) == ("True", "Rebalancing"), scaling
    assert f"{task} to {member}" in scaling.message


def test_a_handover_whose_new_owner_still_starts_is_not_done_and_not_balanced() -> None:
    sim, task, member = handing_over()
    world = sim.world()
    assert world.pods[member].roles[task] == "active"  # the role alone says nothing
    starting = seen(world, member, processing=world.pods[member].processing - {task})
    plan = decide(starting)
    still_handing_over(plan, task, member)
    condition = plan.assessment.condition("Balanced")
    assert (condition.status, condition.reason) == ("False", "HandingOver"), condition
    assert condition.message == (
        "every task is on its target member, but 1 task(s) handed over do not run on "
        f"their new owner yet: {task} on {member} (starting)"
    )


def test_a_handover_whose_new_owner_restores_is_not_done_and_names_its_lag() -> None:
    sim, task, member = handing_over()
    world = sim.world()
    pod = world.pods[member]
    store = next(iter(pod.offsets[task]))
    restoring = seen(
        world,
        member,
        processing=pod.processing - {task},
        restoring=pod.restoring | {task},
        offsets={**pod.offsets, task: {store: sim.changelog_end - 120}},
    )
    plan = decide(restoring)
    still_handing_over(plan, task, member)
    condition = plan.assessment.condition("Balanced")
    assert (condition.status, condition.reason) == ("False", "ActiveRestoring"), condition
    assert f"{task} on {member} (120 records behind)" in condition.message


def test_a_handover_is_done_once_its_new_owner_runs_the_task() -> None:
    sim, task, member = handing_over()
    sim.pods[member].starting.add(task)
    for _ in range(3):  # a worker that takes its time to fence the previous owner
        plan = sim.step()
        still_handing_over(plan, task, member)
        assert plan.assessment.condition("Balanced").reason == "HandingOver"
    sim.pods[member].starting.clear()
    plan = sim.step()
    assert not plan.memory.handovers
    assert dict(plan.handovers_done) == {task: 4 * sim.tick}  # published to running
    balanced(sim, 2)


def test_an_active_that_does_not_run_outside_a_handover_keeps_the_app_unbalanced() -> None:
    """A restart or a first start: no handover, nothing to move, so no scale in flight;
    still not balanced, and the phase is not Running, until each active runs."""
    sim = Sim(replicas=2)
    sim.run()
    balanced(sim, 2)
    waits = sorted(sim.owners())  # every task of the app, fencing on its owner
    for member in sim.pods:
        sim.pods[member].starting.update(t for t, m in sim.owners().items() if m == member)
    plan = decide(sim.world())
    condition = plan.assessment.condition("Balanced")
    assert (condition.status, condition.reason) == ("False", "Starting"), condition
    assert condition.message.startswith(
        "every task is on its target member, but 6 task(s) do not run as the generation "
        f"places them yet: {waits[0]} on {sim.owners()[waits[0]]} (starting), "
    )
    assert condition.message.endswith(" and 1 more")
    assert plan.assessment.phase == "Scaling"
    assert plan.assessment.condition("Scaling").status == "False"  # nothing moves
    for pod in sim.pods.values():
        pod.starting.clear()
    sim.step()
    balanced(sim, 2)


def test_a_standby_its_member_does_not_hold_yet_keeps_the_app_unbalanced() -> None:
    sim = Sim(replicas=2).with_policy(num_standby_replicas=1)
    sim.run()
    balanced(sim, 2)
    assert sim.published is not None
    member, roles = sorted(sim.published.members.items())[0]
    task = roles.standby[0]
    world = sim.world()
    pod = world.pods[member]
    plan = decide(seen(world, member, roles={t: r for t, r in pod.roles.items() if t != task}))
    condition = plan.assessment.condition("Balanced")
    assert (condition.status, condition.reason) == ("False", "Starting"), condition
    assert f"{task} on {member} (standby, not taken up yet)" in condition.message
