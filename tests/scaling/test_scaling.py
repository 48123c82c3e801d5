"""The scaling state machine driven through the pure simulator: every scale action ends
balanced, every task always has exactly one owner, and learners gate every handover."""

from __future__ import annotations

from collections import Counter

from segue.operator.scaling import Published, Roles, decide

from .sim import Sim

TASKS = {f"0_{p}" for p in range(6)}


def one_owner_each(published: Published | None) -> None:
    assert published is not None
    owners = Counter(t for r in published.members.values() for t in r.active)
    assert set(owners) == TASKS, f"tasks without owner: {TASKS - set(owners)}"
    assert all(n == 1 for n in owners.values()), f"tasks with two owners: {owners}"


def balanced(sim: Sim, members: int) -> None:
    assert sim.published is not None
    sizes = sorted(len(r.active) for r in sim.published.members.values())
    assert len(sizes) == members, sizes
    assert sizes[-1] - sizes[0] <= 1, sizes
    conditions = {c.type: c for c in sim.plans[-1].assessment.conditions}
    assert conditions["Balanced"].status == "True", conditions
    assert conditions["Scaling"].status == "False", conditions
    assert sim.plans[-1].assessment.phase == "Running"


def test_fresh_start_creates_pods_then_assigns_every_task() -> None:
    sim = Sim(replicas=2)
    first = sim.step()
    assert first.create_pods == ("wc-0", "wc-1")
    assert first.publish is None
    assert first.assessment.phase == "Pending"
    sim.run()
    one_owner_each(sim.published)
    balanced(sim, 2)
    assert sim.published is not None
    assert sim.published.generation == 1


def test_scale_up_goes_through_learners_and_ends_balanced() -> None:
    sim = Sim(replicas=2, rate=300)
    sim.run()
    before = sim.owners()
    sim.replicas = 4
    plan = sim.step()
    assert plan.create_pods == ("wc-2", "wc-3")
    assert plan.assessment.phase == "Scaling"
    handed: dict[str, int] = {}
    for _ in range(40):
        previous = sim.published
        plan = sim.step()
        one_owner_each(sim.published)
        if plan.publish is not None and previous is not None:
            for m, r in plan.publish.members.items():
                for t in r.active:
                    if before.get(t) not in (None, m) and t not in handed:
                        # a handover only ever goes to a member that learned the task
                        assert t in previous.members.get(m, r).learning or t in (
                            previous.members.get(m, r).standby
                        ), (t, m)
                        handed[t] = previous.generation
        if not plan.busy and plan.publish is None:
            break
    balanced(sim, 4)
    assert handed, "nothing moved to the new members"
    assert sim.events("LearnersAssigned")
    assert sim.events("TaskHandedOver")
    durations = [d for p in sim.plans for _, d in p.handovers_done]
    assert all(0 < d <= 5 * sim.tick for d in durations), durations
    assert len([h for p in sim.plans for h in p.handovers_done]) == len(handed)


def test_scale_down_warms_up_hands_over_then_deletes() -> None:
    sim = Sim(replicas=4, rate=400)
    sim.run()
    sim.replicas = 2
    plan = sim.step()
    leaving = sorted(plan.memory.leaving)
    assert len(leaving) == 2
    assert plan.delete_pods == ()  # nobody goes before their tasks are handed over
    deleted: list[str] = []
    for _ in range(40):
        plan = sim.step()
        one_owner_each(sim.published)
        for name in plan.delete_pods:
            assert sim.published is not None
            assert name not in sim.published.members
            deleted.append(name)
        if not plan.busy and plan.publish is None and not plan.delete_pods:
            break
    assert sorted(deleted) == leaving
    assert sorted(plan.delete_pods + tuple(deleted)) == leaving
    assert set(plan.memory.leaving) == set()
    balanced(sim, 2)
    assert sim.events("ScaleDownStarted")
    assert sim.events("MemberLeft")
    assert not sim.events("ScaleDownTimeout")


def test_a_leaver_that_hands_over_by_leaving_goes_in_the_step_of_its_handover() -> None:
    """``Policy.leave_hands_over`` (Kafka Streams): the generation that moves a leaving
    member's last active task elsewhere also drops it, and its pod goes in the same step:
    its instance commits and closes the task and leaves, and the rebalance its leave
    starts gives the task to its new owner. Without it, the pod goes a step later, once
    it applied the generation that took its tasks."""

    def handover_and_departure(policy: dict[str, bool]) -> tuple[int, int]:
        """The steps at which the leaver's last active task moved, and its pod went."""
        sim = Sim(replicas=3, rate=400).with_policy(**policy)
        sim.run()
        sim.replicas = 2
        (leaver,) = sorted(sim.step().memory.leaving)
        moved: int | None = None
        for n in range(40):
            plan = sim.step()
            one_owner_each(sim.published)
            assert sim.published is not None
            if moved is None and not sim.published.members.get(leaver, Roles()).active:
                moved = n
            if leaver in plan.delete_pods:
                assert leaver not in sim.published.members
                assert moved is not None
                assert not sim.run().busy
                balanced(sim, 2)
                assert sim.events("MemberLeft")
                return moved, n
        raise AssertionError(f"{leaver} never left")

    moved, deleted = handover_and_departure({"leave_hands_over": True})
    assert deleted == moved
    moved, deleted = handover_and_departure({"leave_hands_over": False})
    assert deleted == moved + 1


def test_scale_down_timeout_forces_the_handover_and_deletes() -> None:
    sim = Sim(replicas=3, rate=1000)
    sim.run()
    for pod in sim.pods.values():
        pod.stuck = True  # no new copy will ever catch up
    sim.with_policy(scale_down_timeout=10.0, acceptable_recovery_lag=0)
    sim.changelog_end = 5000  # actives are current, any new copy is behind forever
    sim.replicas = 2
    sim.step()
    assert sim.memory.leaving
    gone = next(iter(sim.memory.leaving))
    for _ in range(8):
        plan = sim.step()
        assert gone not in plan.delete_pods
    for _ in range(10):
        plan = sim.step()
        one_owner_each(sim.published)
        if gone not in sim.pods:
            break
    assert gone not in sim.pods
    assert sim.events("ScaleDownTimeout")
    assert sim.published is not None
    assert gone not in sim.published.members
    said = [c.reason for p in sim.plans for c in p.assessment.conditions if c.type == "Degraded"]
    assert "ScaleDownTimeout" in said
    sim.run()
    balanced(sim, 2)  # the condition clears once the app is balanced again


def test_mid_scale_request_replans_without_undoing() -> None:
    sim = Sim(replicas=2, rate=100)
    sim.run()
    sim.replicas = 4
    sim.step()
    sim.step()
    sim.step()
    sim.replicas = 3  # changed mind while learners restore
    plan = sim.step()
    members = set(sim.published.members) if sim.published else set()
    staying = (members - set(plan.memory.leaving)) | set(plan.memory.joining)
    assert len(staying) == 3
    sim.run(80)
    one_owner_each(sim.published)
    balanced(sim, 3)
    assert len(sim.pods) == 3


def test_scale_up_cancels_a_pending_scale_down_first() -> None:
    sim = Sim(replicas=3, rate=50)
    sim.run()
    sim.replicas = 2
    plan = sim.step()
    assert len(plan.memory.leaving) == 1
    sim.replicas = 3
    plan = sim.step()
    assert plan.memory.leaving == {}
    assert plan.create_pods == ()
    assert sim.events("ScaleDownCancelled")


def test_batch_promotion_waits_for_all_of_a_members_learners() -> None:
    sim = Sim(replicas=1, rate=1000)
    sim.run()
    sim.with_policy(learner_promotion="batch", max_warmup_replicas=3)
    sim.replicas = 2
    sim.step()  # wc-1 is created; it runs, then reads the assignment (not yet in it)
    sim.step()
    sim.step()  # wc-1 is admitted and learns three tasks
    assert sim.published is not None
    learning = sim.published.members["wc-1"].learning
    assert len(learning) == 3
    slow = learning[-1]
    world = sim.world()
    offsets = {t: {"counts": 1000 if t != slow else 0} for t in learning}
    pods = dict(world.pods)
    pods["wc-1"] = type(pods["wc-1"])(
        **{**pods["wc-1"].__dict__, "offsets": offsets, "reporting": True, "running": True}
    )
    from dataclasses import replace

    plan = decide(replace(world, pods=pods))
    assert plan.publish is None or not plan.publish.members["wc-1"].active
    eager_policy = replace(world.policy, learner_promotion="eager")
    eager = decide(replace(world, pods=pods, policy=eager_policy))
    assert eager.publish is not None
    assert len(eager.publish.members["wc-1"].active) == 2


def test_same_world_same_plan() -> None:
    sim = Sim(replicas=3)
    sim.run()
    sim.replicas = 5
    sim.step()
    sim.step()
    world = sim.world()
    assert decide(world) == decide(world)


def test_departed_members_claims_follow_the_retention_policy() -> None:
    for retain, expected in ((False, True), (True, False)):
        sim = Sim(replicas=3, rate=1000).with_policy(retain_state=retain)
        sim.run()
        sim.replicas = 2
        sim.run()
        claims = [c for p in sim.plans for c in p.delete_claims]
        deleted = [d for p in sim.plans for d in p.delete_pods]
        assert len(deleted) == 1
        assert (claims == deleted) is expected, (retain, claims, deleted)


def test_last_scale_is_when_a_scale_action_started_and_only_then() -> None:
    sim = Sim(replicas=2)
    sim.run()
    first = sim.memory.last_scale  # the first two pods joined: a scale from 0
    assert first is not None
    sim.run()
    assert sim.memory.last_scale == first  # settled steps do not move it
    sim.replicas = 3
    started = sim.now
    plan = sim.step()
    assert plan.memory.last_scale == started
    sim.run()
    assert sim.memory.last_scale == started  # the warm-up and handovers are the same action
    sim.replicas = 2
    down = sim.now
    assert sim.step().memory.last_scale == down


def test_an_active_restoring_its_state_is_not_called_balanced() -> None:
    """Placed is not processing: an active that lost its store (a failover without a
    standby, a forced handover) restores first, and the status names it with its lag
    until it is current again."""
    sim = Sim(replicas=2)
    sim.run()
    balanced(sim, 2)
    owner = sim.owners()["0_3"]
    sim.pods[owner].restored["0_3"] = 0  # its store is gone: 1000 records to replay
    plan = decide(sim.world())
    restoring = plan.assessment.condition("Balanced")
    assert (restoring.status, restoring.reason) == ("False", "ActiveRestoring"), restoring
    assert f"0_3 on {owner} (1,000 records behind)" in restoring.message
    assert plan.assessment.condition("Scaling").status == "False"  # nothing to move
    sim.step()  # the sim's actives catch up in a step; the next look sees it current
    sim.step()
    balanced(sim, 2)
