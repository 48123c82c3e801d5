"""``Policy.handover_lead`` (set for Kafka Streams apps): a learner expected within the
acceptable lag that many seconds from now counts as caught up, so learners catching up a
look apart are handed over in one generation (one revoking round of the group). Without
``warm_first``, whose own rule would batch a new member's first handovers anyway."""

from __future__ import annotations

import re

import pytest

from .sim import Sim
from .test_warm_first import COUNTING, generations, wordcount


def counting_moves(sim: Sim, start: int) -> list[int]:
    """The looks (plan indices from ``start``) whose generation moved a counting task."""
    looks = []
    before = next(p.publish for p in reversed(sim.plans[:start]) if p.publish is not None)
    owner = {t: m for m, r in before.members.items() for t in r.active}
    for i, plan in enumerate(sim.plans[start:]):
        if plan.publish is None:
            continue
        now = {t: m for m, r in plan.publish.members.items() for t in r.active}
        if any(owner.get(t, now[t]) != now[t] for t in COUNTING):
            looks.append(i)
        owner = now
    return looks


def scaled(
    lead: float, ahead: int = 0, warm_first: bool = False, promotion: str = "eager"
) -> tuple[Sim, int]:
    """A 2 -> 3 scale; ``ahead``: records the first of the new pod's learners is given
    beyond the second as soon as both learn (so it catches up ``ahead / rate`` looks
    sooner)."""
    sim = wordcount(warm_first).with_policy(handover_lead=lead, learner_promotion=promotion)
    start = len(sim.plans)
    sim.replicas = 3
    for _ in range(40):
        sim.step()
        roles = sim.published.members.get("wc-2") if sim.published else None
        if roles is not None and len(roles.learning) == 2 and sim.pods["wc-2"].restored:
            first = roles.learning[0]
            sim.pods["wc-2"].restored[first] = sim.pods["wc-2"].restored.get(first, 0) + ahead
            break
    else:
        raise AssertionError("wc-2 never learned two tasks")
    sim.run(120)
    assert sim.plans[-1].assessment.phase == "Running"
    return sim, start


def test_learners_a_look_apart_are_handed_over_together() -> None:
    sim, start = scaled(lead=1.0, ahead=100)  # rate: 100 records a look, a look a second
    assert len(counting_moves(sim, start)) == 1
    # without the lead each goes in a round of its own
    sim, start = scaled(lead=0.0, ahead=100)
    assert len(counting_moves(sim, start)) == 2


@pytest.mark.parametrize("lead", [1.0, 2.0])
def test_a_learner_is_handed_over_lead_seconds_before_it_catches_up(lead: float) -> None:
    without, s0 = scaled(lead=0.0)
    with_lead, s1 = scaled(lead=lead)
    assert counting_moves(with_lead, s1)[0] == counting_moves(without, s0)[0] - int(lead)
    # and the task moved once: the lead does not make the target move it again
    owners = {t: m for m, r in generations(with_lead, s1)[-1].members.items() for t in r.active}
    assert sum(owners[t] == "wc-2" for t in COUNTING) == 2


def test_batch_promotion_hands_a_new_members_learners_over_in_one_generation() -> None:
    """``learnerPromotion: batch``: a new member's handovers wait for all its learners,
    however far apart they catch up (here three looks, beyond any lead); ``eager``
    (``warm_first`` too) hands each over when it is ready."""
    sim, start = scaled(lead=1.0, ahead=300, warm_first=True, promotion="batch")
    assert len(counting_moves(sim, start)) == 1
    sim, start = scaled(lead=1.0, ahead=300, warm_first=True)
    assert len(counting_moves(sim, start)) == 2


def test_a_learner_that_waits_for_its_members_other_restore_is_not_taken_along() -> None:
    """A Kafka Streams instance restores one copy at a time (``Sim.sequential``): the new
    pod's second learner, a look's restore short of the acceptable lag, has no rate of its
    own while the first restores. It is not counted caught up with the first's handover
    (estimated from the first's rate, one was handed over 22,326 records behind and
    restored them as an active): it goes in a round of its own once caught up."""
    sim = wordcount(False).with_policy(handover_lead=1.0)
    sim.sequential = True
    start = len(sim.plans)
    sim.replicas = 3
    for _ in range(40):
        sim.step()
        roles = sim.published.members.get("wc-2") if sim.published else None
        if roles is not None and len(roles.learning) == 2:
            second = roles.learning[1]
            sim.pods["wc-2"].restored[second] = sim.changelog_end - sim.rate
            break
    else:
        raise AssertionError("wc-2 never learned two tasks")
    sim.run(120)
    assert sim.plans[-1].assessment.phase == "Running"
    assert len(counting_moves(sim, start)) == 2
    # each handover says how far its new owner's copy was when it was decided: within
    # what the lead lets it restore meanwhile (a look is a second, ``sim.rate`` a look)
    bound = sim.policy.acceptable_recovery_lag + 2 * 1.0 * sim.rate
    named = [
        (pair.split()[0], int(found.group(1).replace(",", "")))
        for plan in sim.plans[start:]
        for e in plan.events
        if e.reason == "TaskHandedOver"
        for pair in e.message.split(": ", 1)[1].split(", ")
        if (found := re.search(r"\(([\d,]+) behind\)", pair))
    ]
    assert {t for t, _ in named} >= {
        t for t in COUNTING if t in sim.published.members["wc-2"].active
    }
    assert all(lag <= bound for _, lag in named), named
