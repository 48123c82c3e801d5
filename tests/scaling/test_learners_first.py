"""``Policy.learners_first`` (set for Kafka Streams apps): a member's new standbys wait
until its learners are handed over and running, and meanwhile stay where they were, so a
pod that restores one copy at a time restores its learners first and nothing at its
handover (docs/kafka-streams.md, "What happens at a rebalance")."""

from __future__ import annotations

import pytest

from segue.operator.scaling import Published

from .sim import Sim
from .test_warm_first import COUNTING, generations, wordcount


def scaled(learners_first: bool, before: int = 2, after: int = 3) -> tuple[Sim, list[Published]]:
    sim = wordcount(warm_first=True, replicas=before).with_policy(learners_first=learners_first)
    start = len(sim.plans)
    sim.replicas = after
    sim.run(160)
    assert sim.plans[-1].assessment.phase == "Running"
    return sim, generations(sim, start)


def single(gens: list[Published]) -> set[str]:
    """The counting tasks some generation gives no copy besides the active (a standby,
    or a learner)."""
    return {
        t
        for g in gens
        for t in COUNTING
        if not any(t in r.standby + r.learning for r in g.members.values())
    }


def standbys_while_arriving(gens: list[Published], member: str) -> list[int]:
    """Generations in which ``member`` holds a standby while it still learns, or in the
    generation that hands it tasks (and the one after: the handover is not running yet)."""
    seen, owner = [], {t: m for m, r in gens[0].members.items() for t in r.active}
    handed = -2
    for i, g in enumerate(gens):
        roles = g.members.get(member)
        if roles is None:
            continue
        if any(owner.get(t) not in (None, member) for t in roles.active):
            handed = i
        if roles.standby and (roles.learning or i == handed):
            seen.append(g.generation)
        owner = {t: m for m, r in g.members.items() for t in r.active}
    return seen


@pytest.mark.parametrize(("before", "after"), [(2, 3), (3, 6)])
def test_a_new_member_restores_its_standbys_after_its_learners(before: int, after: int) -> None:
    _, gens = scaled(learners_first=True, before=before, after=after)
    new = [f"wc-{i}" for i in range(before, after)]
    for member in new:
        assert standbys_while_arriving(gens, member) == [], member
        # and it holds them in the end: balanced three ways
        assert gens[-1].members[member].standby, (member, gens[-1])
    # no task went without a second copy that had one without the rule: a standby held
    # back stayed where it was
    _, plain = scaled(learners_first=False, before=before, after=after)
    assert single(gens) <= single(plain), (single(gens), single(plain))
    final = gens[-1]
    counts = {m: len(r.active) + len(r.standby) for m, r in final.members.items()}
    assert max(counts.values()) - min(counts.values()) <= 1, counts


def test_without_it_a_new_member_learns_and_restores_standbys_at_once() -> None:
    _, gens = scaled(learners_first=False)
    assert standbys_while_arriving(gens, "wc-2"), "the rule's test would not see a change"
