"""``Policy.warm_first`` (set for Kafka Streams apps): a new member runs no active task
until its first handover, and its stateless tasks move with that handover, so a group
takes them up in a round it pays anyway rather than in one of their own while the new
JVMs are cold (docs/kafka-streams.md, "What happens at a rebalance")."""

from __future__ import annotations

from collections import Counter

import pytest

from segue.operator.scaling import Policy, Published
from segue.protocol.topology import SubTopologyDescription

from .sim import Sim
from .test_hold import owner_changes

# WordCount's shape: a counting sub-topology with a store, fed by a stateless one
WORDCOUNT = (
    SubTopologyDescription(0, ("words",), ("counts",), ("wc-counts-changelog",)),
    SubTopologyDescription(1, ("lines",)),
)
COUNTING = {f"0_{p}" for p in range(6)}
SPLITTING = {f"1_{p}" for p in range(6)}


def wordcount(warm_first: bool, replicas: int = 2) -> Sim:
    policy = Policy(acceptable_recovery_lag=10, num_standby_replicas=1, warm_first=warm_first)
    sim = Sim(
        replicas=replicas,
        policy=policy,
        subtopologies=WORDCOUNT,
        partitions={"words": 6, "lines": 6},
        rate=100,  # ten looks to restore a copy from nothing
    )
    sim.run()
    assert sim.plans[-1].assessment.phase == "Running"
    return sim


def generations(sim: Sim, start: int) -> list[Published]:
    return [p.publish for p in sim.plans[start:] if p.publish is not None]


def first_active(gens: list[Published], member: str) -> int:
    """The index of the first generation giving ``member`` an active task."""
    for i, g in enumerate(gens):
        roles = g.members.get(member)
        if roles is not None and roles.active:
            return i
    raise AssertionError(f"{member} never got an active task")


@pytest.mark.parametrize(("before", "after"), [(2, 3), (3, 6)])
def test_a_new_member_takes_its_stateless_tasks_with_its_own_first_handover(
    before: int, after: int
) -> None:
    sim = wordcount(warm_first=True, replicas=before)
    start = len(sim.plans)
    sim.replicas = after
    sim.run(120)
    gens = generations(sim, start)
    new = [f"wc-{i}" for i in range(before, after)]
    for member in new:
        index = first_active(gens, member)
        admitted = next(i for i, g in enumerate(gens) if member in g.members)
        assert index > admitted, f"{member} ran actives in the generation admitting it"
        # its first actives include a counting task: its stateless ones came with its
        # own first handover, not with another member's
        assert set(gens[index].members[member].active) & COUNTING, (member, gens[index])
        # and until then it ran no active task
        for g in gens[admitted:index]:
            assert not g.members[member].active, (member, g.generation)
    # no generation moves stateless tasks alone: they go with a handover
    owner = {t: m for m, r in gens[0].members.items() for t in r.active}
    for g in gens:
        moved = {t for m, r in g.members.items() for t in r.active if owner.get(t, m) != m}
        assert not moved or moved & COUNTING, f"generation {g.generation} moved only {moved}"
        owner = {t: m for m, r in g.members.items() for t in r.active}
    # nothing moved twice, every task has one owner, balanced three ways at the end
    assert max(owner_changes(sim, start).values()) == 1
    owners = Counter(t for r in gens[-1].members.values() for t in r.active)
    assert set(owners) == COUNTING | SPLITTING
    assert set(owners.values()) == {1}
    counts = sorted(len(set(r.active) & COUNTING) for m, r in gens[-1].members.items())
    assert counts[-1] - counts[0] <= 1, counts
    balanced = {c.type: c.status for c in sim.plans[-1].assessment.conditions}
    assert balanced["Balanced"] == "True"
    assert balanced["Scaling"] == "False"


def test_without_it_stateless_tasks_move_in_the_generation_admitting_the_member() -> None:
    """The default (Segue's own runtime): the same scale moves stateless tasks at once."""
    sim = wordcount(warm_first=False)
    start = len(sim.plans)
    sim.replicas = 3
    sim.run(120)
    gens = generations(sim, start)
    admitted = next(i for i, g in enumerate(gens) if "wc-2" in g.members)
    assert set(gens[admitted].members["wc-2"].active) & SPLITTING


def test_a_member_whose_learners_cannot_run_is_not_held_cold() -> None:
    """Its learners restore nothing: waiting for them would hold its tasks forever."""
    from segue.operator.scaling import TaskFault

    sim = wordcount(warm_first=True)
    sim.replicas = 3
    sim.step()  # wc-2 is created
    sim.pods["wc-2"].faults = {
        f"0_{p}": TaskFault("StoreCorrupted", "cannot open") for p in range(6)
    }
    sim.run(40)
    assert sim.published is not None
    assert set(sim.published.members["wc-2"].active) & SPLITTING


@pytest.mark.parametrize("promotion", ["eager", "batch"])
@pytest.mark.parametrize("warm_first", [False, True])
def test_a_held_move_leaves_each_task_once_per_member_and_one_owner(
    promotion: str, warm_first: bool
) -> None:
    """A move held back leaves its task active on its owner and nowhere else as active,
    and no member holds a task in two roles (its standby there is dropped)."""
    sim = wordcount(warm_first=warm_first).with_policy(learner_promotion=promotion)
    start = len(sim.plans)
    sim.replicas = 3
    sim.run(120)
    for g in generations(sim, start):
        owners = Counter(t for r in g.members.values() for t in r.active)
        assert set(owners) == COUNTING | SPLITTING, g
        assert set(owners.values()) == {1}, g
        for m, r in g.members.items():
            roles = Counter(r.tasks())
            assert set(roles.values()) == {1}, (g.generation, m, r)
            assert not set(r.learning) & SPLITTING
            assert not set(r.standby) & SPLITTING
    assert sim.plans[-1].assessment.phase == "Running"
