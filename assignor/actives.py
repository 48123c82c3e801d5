"""Target active tasks: the exact cheapest placement that meets the three balances.

The balances are laminar per member (a sub-topology's tasks within the stateful ones within
all of them), so they are bounds on a flow network: ``task -> X(member, subtopology) ->
[stateful(member)] -> member -> sink``. The network does not need N x M arcs: a task costs
the same on every member that holds no state for it, so it reaches those through one hub per
sub-topology, and has its own arcs only to the few members that hold something (owner,
standbys, learners, members with lags). Tasks with identical arcs and costs are bundled into
one node carrying their count. The flow optimum is the exact optimum of the placement.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from .balance import Bounds, bounds, tolerance_fraction
from .flow import FlowNetwork
from .problem import NO_MEMBER, Problem
from .tiers import Tiers, fold, restore_units

# Preference tier: a running learner (or the owner) first, then any local copy, then nobody.
PREFER_LEARNER, PREFER_LOCAL, PREFER_NONE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class ActiveBalance:
    """The three balances of seed 001, indexed by eligible position."""

    total: Bounds
    stateful: Bounds
    per_group: dict[int, Bounds]  # sub-topology -> bounds


def active_balance(problem: Problem, eligible: list[int]) -> ActiveBalance:
    capacities = [problem.members[m].capacity for m in eligible]
    tolerance = tolerance_fraction(problem.config.balance_tolerance)
    group_sizes: dict[int, int] = defaultdict(int)
    for sub in problem.subtopology:
        group_sizes[sub] += 1
    return ActiveBalance(
        total=bounds(len(problem.task_ids), capacities, tolerance),
        stateful=bounds(sum(problem.stateful), capacities, tolerance),
        per_group={g: bounds(n, capacities, tolerance) for g, n in sorted(group_sizes.items())},
    )


# The tiers of a placement's cost, highest first (docs/assignor.md, "Costs").
MOVES, RESTORE, PREFERENCE = 0, 1, 2


def active_tiers(problem: Problem) -> Tiers:
    """Tiers: tasks moved, then bytes (or tasks) to restore, then the learner preference.

    Moves come first: a caught-up copy elsewhere is where a task goes when it must move,
    never a reason to move it (issue 24; seed 001's "maximum overlap with the current
    assignment" among the balanced ones)."""
    count = len(problem.task_ids)
    stateful = sum(problem.stateful)
    if problem.sizes_known:
        total_bytes = sum(b or 0 for b in problem.state_bytes)
        return fold([count, 0, 2 * count], bytes_tier=RESTORE, bytes_total=total_bytes)
    return fold([count, stateful, 2 * count])


def task_weight(problem: Problem, task: int, tiers: Tiers) -> int:
    """Restore units of one task: its bytes in quanta, or 1 when sizes are unknown."""
    if not problem.stateful[task]:
        return 0
    if problem.sizes_known:
        return restore_units(problem.state_bytes[task], tiers.quantum)
    return 1


def copy_weight(problem: Problem, task: int, member: int, tiers: Tiers) -> int:
    """Restore units still to read for a copy on ``member`` (:meth:`Problem.to_restore`)."""
    if problem.caught_up(task, member):
        return 0
    if problem.sizes_known:
        return restore_units(problem.to_restore(task, member), tiers.quantum)
    return task_weight(problem, task, tiers)


def active_arcs(
    problem: Problem, task: int, position: dict[int, int], tiers: Tiers
) -> tuple[int, tuple[tuple[int, int], ...]]:
    """``(hub cost, ((eligible position, cost), ...))`` of one task's candidate placements."""
    weight = task_weight(problem, task, tiers)
    hub = tiers.cost(1, weight, PREFER_NONE)
    own = problem.owner[task]
    copies = problem.lags[task] or problem.learners[task] or problem.standbys[task]
    if not (problem.stateful[task] and copies):
        # no copy anywhere but the owner's (most tasks of a large request): its one arc
        return hub, ((position[own], 0),) if own in position else ()
    arcs: dict[int, int] = {}
    if own in position:
        arcs[position[own]] = 0
    if problem.stateful[task]:
        learners = problem.learners[task]
        for m in problem.lags[task]:
            if m in position and m != own:
                prefer = PREFER_LEARNER if m in learners else PREFER_LOCAL
                arcs[position[m]] = tiers.cost(1, copy_weight(problem, task, m, tiers), prefer)
        for members, prefer in ((learners, PREFER_LEARNER), (problem.standbys[task], PREFER_LOCAL)):
            for m in members:
                if m in position and m != own and position[m] not in arcs:
                    arcs[position[m]] = tiers.cost(1, weight, prefer)
    return hub, tuple(sorted((e, c) for e, c in arcs.items() if c < hub))


def place_actives(problem: Problem, eligible: list[int], tiers: Tiers) -> list[int]:
    """Member index of each task's target active (exact min-cost flow)."""
    count = len(problem.task_ids)
    if count == 0:
        return []
    position = {m: e for e, m in enumerate(eligible)}
    balance = active_balance(problem, eligible)
    groups = list(balance.per_group)
    group_of = {g: i for i, g in enumerate(groups)}
    stateful_groups = {problem.subtopology[t] for t in range(count) if problem.stateful[t]}
    mixed = 0 < len(stateful_groups) < len(groups)
    size = len(eligible)

    net = FlowNetwork()
    sink = net.node(-count)
    member = net.nodes(size)
    for e in range(size):
        net.arc(member + e, sink, 0, balance.total.upper[e], balance.total.lower[e])
    stateful_node = net.nodes(size) if mixed else member
    if mixed:
        for e in range(size):
            net.arc(
                stateful_node + e,
                member + e,
                0,
                balance.stateful.upper[e],
                balance.stateful.lower[e],
            )
    cell = net.nodes(size * len(groups))
    hub = net.nodes(len(groups))
    hub_arcs: list[list[int]] = []
    for gi, g in enumerate(groups):
        above = stateful_node if g in stateful_groups else member
        limits = balance.per_group[g]
        row = []
        for e in range(size):
            net.arc(cell + e * len(groups) + gi, above + e, 0, limits.upper[e], limits.lower[e])
            row.append(net.arc(hub + gi, cell + e * len(groups) + gi, 0, limits.upper[e]))
        hub_arcs.append(row)

    bundles: dict[tuple[int, int, tuple[tuple[int, int], ...]], list[int]] = {}
    for t in range(count):
        hub_cost, arcs = active_arcs(problem, t, position, tiers)
        bundles.setdefault((group_of[problem.subtopology[t]], hub_cost, arcs), []).append(t)
    plan: list[tuple[list[int], int, list[tuple[int, int]]]] = []
    for (gi, hub_cost, arcs), tasks in bundles.items():
        node = net.node(len(tasks))
        out = [
            (net.arc(node, cell + e * len(groups) + gi, cost, len(tasks)), e) for e, cost in arcs
        ]
        out.append((net.arc(node, hub + gi, hub_cost, len(tasks)), NO_MEMBER))
        plan.append((tasks, gi, out))

    flows = net.solve()
    if flows is None:  # the fractional shares meet every bound, so this cannot happen
        raise RuntimeError("active balance is infeasible; this is a bug in the assignor")

    target = [NO_MEMBER] * count
    through_hub: list[list[int]] = [[] for _ in groups]
    for tasks, gi, out in plan:
        queue = deque(tasks)
        for arc, e in out:
            for _ in range(flows[arc]):
                t = queue.popleft()
                if e == NO_MEMBER:
                    through_hub[gi].append(t)
                else:
                    target[t] = eligible[e]
    for gi, row in enumerate(hub_arcs):
        pending = deque(sorted(through_hub[gi]))
        for e, arc in enumerate(row):
            for _ in range(flows[arc]):
                target[pending.popleft()] = eligible[e]
    return target
