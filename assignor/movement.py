"""The immediate assignment: what runs now on the way to the target (KIP-441 + learners).

Rules, in the order they are applied:

1. Stateless tasks, and tasks nobody holds state for, go straight to their target owner.
2. A task whose owner is gone goes at once to its most caught-up member (lowest lag, then
   its target owner, then a standby, then member order).
3. An active task moves from a present owner only to a target owner that is caught up on it
   (a caught-up standby or learner is promoted directly); otherwise it stays and the target
   owner gets a learner.
4. No member runs more stateful actives than ``max(before, target)``. A member over that
   limit first defers incoming handovers (they can wait), then passes orphans on to their next
   candidate; the handovers left are the largest set within every limit, so swaps between full
   members still happen.
5. At most ``max_warmup_replicas`` learners restore at once: running learners are kept (no
   half-way bounce), then new ones go to the tasks with the fewest caught-up members, then by
   task id. A learner that has caught up but whose handover rule 4 defers stays, outside the
   budget, so it can never block the moves that make room for it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .problem import NO_MEMBER, Problem


@dataclass(frozen=True, slots=True)
class Movement:
    active: list[int]  # per task: member running it now
    standbys: list[tuple[int, ...]]
    learner: list[int]  # per task: member running its learner, or NO_MEMBER
    restoring: int  # learners not yet caught up
    waiting: int  # tasks that still need a learner and did not get one


def plan_movement(
    problem: Problem, target: list[int], target_standbys: list[tuple[int, ...]]
) -> Movement:
    count = len(problem.task_ids)
    members = problem.members
    before = [0] * len(members)
    wanted = [0] * len(members)
    for t in range(count):
        if problem.stateful[t]:
            if problem.owner[t] != NO_MEMBER:
                before[problem.owner[t]] += 1
            wanted[target[t]] += 1
    limit = [max(b, w) for b, w in zip(before, wanted, strict=True)]
    active = [problem.owner[t] if problem.stateful[t] else target[t] for t in range(count)]
    moved = _settle(problem, target, active, before, limit)
    for t, m in moved.items():
        active[t] = m

    learner = [NO_MEMBER] * count
    stuck = [t for t in range(count) if active[t] != target[t]]
    restoring_tasks = [t for t in stuck if not problem.caught_up(t, target[t])]
    for t in stuck:  # caught up but deferred by rule 4: keep a running learner, unbudgeted
        if problem.caught_up(t, target[t]) and target[t] in problem.learners[t]:
            learner[t] = target[t]
    budget = problem.config.max_warmup_replicas

    def priority(t: int) -> tuple[int, int]:
        caught = sum(1 for m in problem.lags[t] if problem.caught_up(t, m))
        owned = problem.owner[t] != NO_MEMBER and problem.owner[t] not in problem.lags[t]
        return caught + owned, t

    running = sorted((t for t in restoring_tasks if target[t] in problem.learners[t]), key=priority)
    fresh = sorted(
        (t for t in restoring_tasks if target[t] not in problem.learners[t]), key=priority
    )
    chosen = (running + fresh)[:budget]
    for t in chosen:
        learner[t] = target[t]

    standbys: list[tuple[int, ...]] = []
    for t in range(count):
        warming = active[t] != target[t] and target[t] in problem.standbys[t]
        if not warming and not target_standbys[t]:
            standbys.append(())
            continue
        keep = set(target_standbys[t])
        if warming:
            keep.add(target[t])  # the future owner keeps warming as a standby meanwhile
        keep.discard(active[t])
        keep.discard(learner[t])
        standbys.append(tuple(sorted(keep)))
    return Movement(active, standbys, learner, len(chosen), len(restoring_tasks) - len(chosen))


def _candidates(problem: Problem, task: int, target: int) -> list[int]:
    """Where a task with no present owner may run, best first (rules 1 and 2)."""
    lags = problem.lags[task]
    holders = [m for m in lags if not problem.members[m].leaving]
    holders.sort(key=lambda m: (lags[m], m != target, m not in problem.standbys[task], m))
    return [*holders, target] if target not in holders else holders


def _settle(
    problem: Problem, target: list[int], active: list[int], load: list[int], limit: list[int]
) -> dict[int, int]:
    """Orphans' homes and the caught-up handovers, keeping every member within its limit.

    Every orphan starts on its best candidate and every caught-up handover is accepted; then,
    while a member is over its limit, it first defers incoming handovers (latest task id
    first: they can wait), then sends its latest orphan on to that orphan's next candidate
    (availability comes first, but not at the price of the skew). What is left is the largest
    set of handovers compatible with the orphans' homes, so swaps between full members happen.
    """
    final = list(load)
    incoming: dict[int, list[int]] = defaultdict(list)
    orphans_on: dict[int, list[int]] = defaultdict(list)
    options: dict[int, list[int]] = {}
    for t in range(len(target)):
        if not problem.stateful[t]:
            continue
        if active[t] == NO_MEMBER:
            options[t] = _candidates(problem, t, target[t])
            orphans_on[options[t][0]].append(t)
            final[options[t][0]] += 1
        elif active[t] != target[t] and problem.caught_up(t, target[t]):
            incoming[target[t]].append(t)
            final[target[t]] += 1
            final[active[t]] -= 1
    place = {t: choices[0] for t, choices in options.items()}
    step = dict.fromkeys(options, 0)
    over = [m for m in range(len(final)) if final[m] > limit[m]]
    while over:
        m = over.pop()
        while final[m] > limit[m] and incoming[m]:
            t = incoming[m].pop()
            final[m] -= 1
            final[active[t]] += 1
            if final[active[t]] > limit[active[t]]:
                over.append(active[t])
        while final[m] > limit[m] and orphans_on[m]:
            t = orphans_on[m].pop()
            choices = options[t]
            step[t] += 1
            if step[t] == len(choices):  # out of candidates: the member with the most room
                choices.append(_roomiest(problem, final, limit))
            nxt = choices[step[t]]
            place[t] = nxt
            orphans_on[nxt].append(t)
            final[m] -= 1
            final[nxt] += 1
            if final[nxt] > limit[nxt]:
                over.append(nxt)
    for tasks in incoming.values():
        for t in tasks:
            place[t] = target[t]
    return place


def _roomiest(problem: Problem, final: list[int], limit: list[int]) -> int:
    """The non-leaving member with the most room left (there is always one, see docs)."""
    return max(
        (m for m, state in enumerate(problem.members) if not state.leaving),
        key=lambda m: (limit[m] - final[m], -m),
    )
