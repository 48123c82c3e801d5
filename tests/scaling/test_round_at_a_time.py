"""``Policy.round_at_a_time`` (set for Kafka Streams apps): while a published handover
has not reached its new owner, no other task moves, so a group's second rebalance of a
handover is not also the first of the next (docs/kafka-streams.md, "What happens at a
rebalance")."""

from __future__ import annotations

import itertools

from segue.operator.scaling import Published

from .sim import Sim
from .test_warm_first import COUNTING, wordcount

LOOKS = 9  # under ARRIVAL_BOUND: a handover not running after that holds nothing back


def moved(before: Published, after: Published) -> set[str]:
    owner = {t: m for m, r in before.members.items() for t in r.active}
    return {t for m, r in after.members.items() for t in r.active if owner.get(t, m) != m}


def scaled(one_round: bool) -> tuple[Sim, list[Published]]:
    """3 -> 6 where the first new owners do not run what they are handed for LOOKS looks;
    the generation of that handover and those published meanwhile."""
    sim = wordcount(warm_first=True, replicas=3).with_policy(round_at_a_time=one_round)
    sim.replicas, sim.rate = 6, 250  # a learner catches up in four looks
    last = sim.published
    for _ in range(80):
        sim.step()
        if last is not None and sim.published is not last and moved(last, sim.published):
            break
        last = sim.published
    else:
        raise AssertionError("no handover")
    first = sim.published
    assert first is not None
    assert last is not None
    to = {m for m, r in first.members.items() for t in r.active if t in moved(last, first)}
    for m in to:  # they do not run the generation that hands them tasks
        sim.pods[m].generation = last.generation
    sim.blind |= to
    meanwhile = [first]
    for _ in range(LOOKS):
        plan = sim.step()
        if plan.publish is not None:
            meanwhile.append(plan.publish)
    sim.blind -= to
    sim.run(160)
    assert sim.plans[-1].assessment.phase == "Running"
    return sim, meanwhile


def test_no_task_moves_while_a_handover_has_not_reached_its_new_owner() -> None:
    sim, meanwhile = scaled(one_round=True)
    for before, after in itertools.pairwise(meanwhile):
        assert not moved(before, after), (before.generation, after.generation, after.members)
    # and every move went ahead afterwards: one owner per task, one counting task each
    final = sim.published
    assert final is not None
    owners = [m for r in final.members.values() for m in r.active if m in COUNTING]
    assert sorted(owners) == sorted(COUNTING)
    assert all(len(set(r.active) & COUNTING) == 1 for r in final.members.values())


def test_without_it_the_next_round_goes_while_the_first_has_not_arrived() -> None:
    _, meanwhile = scaled(one_round=False)
    assert any(moved(b, a) for b, a in itertools.pairwise(meanwhile)), (
        "the rule's test would not see a change"
    )
