"""Target standby tasks, placed after the actives: an exact min-cost flow given them.

Each stateful task gets ``min(num_standby_replicas, eligible members - 1)`` standbys, never on
its active's member nor twice on one member. Priorities, highest first: the stateful balance
(active + standby replicas per member within floor/ceil of the capacity-weighted share), then
rack diversity (no standby on the active's rack when another exists), then bytes to restore,
standbys moved, and the preference for members with a local copy.

Like :mod:`.actives`, tasks reach members that hold nothing for them through a pool (one per
rack of the active), which cannot see the per-task exclusions; the pooled units are then dealt
to members respecting them (:func:`deal`). A deal that succeeds attains the pooled optimum, a
lower bound, so it is optimal; if it fails, or the problem is small, the full task x member
network is solved instead. If the balance itself is infeasible (extreme capacities), it is
relaxed: its violation becomes the top cost tier (``standby_balance_relaxed``).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass

from .balance import bounds, tolerance_fraction
from .dealing import deal
from .flow import FlowNetwork
from .problem import Problem
from .tiers import Tiers, fold, restore_units

FULL_NETWORK_ARCS = 40_000  # below this many task x member arcs, skip the pooling
FALLBACK_NETWORK_ARCS = 4_000_000  # the most a failed deal may fall back to


@dataclass(frozen=True, slots=True)
class StandbyPlan:
    standbys: list[tuple[int, ...]]  # per task, member indexes in order
    replicas: int
    relaxed: bool


def standby_tiers(problem: Problem, replicas: int, soft: bool) -> Tiers:
    units = sum(problem.stateful) * replicas
    maxima = (
        [units, 0, units, 2 * units] if problem.sizes_known else [units, units, units, 2 * units]
    )
    bytes_total = replicas * sum(
        b or 0 for b, s in zip(problem.state_bytes, problem.stateful, strict=True) if s
    )
    if soft:
        maxima = [2 * units, *maxima]
    tier = (2 if soft else 1) if problem.sizes_known else None
    return fold(maxima, bytes_tier=tier, bytes_total=bytes_total)


class _Costs:
    """Per-task costs of a standby on each eligible member (holder arcs and the pool)."""

    def __init__(self, problem: Problem, eligible: list[int], tiers: Tiers, soft: bool) -> None:
        self.problem = problem
        self.eligible = eligible
        self.position = {m: e for e, m in enumerate(eligible)}
        self.tiers = tiers
        self.lead = (0,) if soft else ()
        racks = [problem.members[m].rack for m in eligible]
        self.racks = racks

    def weight(self, task: int) -> int:
        if self.problem.sizes_known:
            return restore_units(self.problem.state_bytes[task], self.tiers.quantum)
        return 1

    def to_restore(self, task: int, member: int) -> int:
        if self.problem.caught_up(task, member):
            return 0
        if self.problem.sizes_known:
            return restore_units(self.problem.to_restore(task, member), self.tiers.quantum)
        return 1

    def same_rack(self, active: int, e: int) -> int:
        rack = self.problem.members[active].rack
        return int(rack is not None and self.racks[e] == rack)

    def pool(self, task: int) -> int:
        return self.tiers.cost(*self.lead, 0, self.weight(task), 1, 2)

    def rack_penalty(self) -> int:
        return self.tiers.cost(*self.lead, 1, 0, 0, 0)

    def holders(self, task: int, active: int) -> tuple[tuple[int, int], ...]:
        p = self.problem
        own = p.owner[task]
        found: dict[int, int] = {}
        for m in (own, *p.lags[task], *p.standbys[task], *p.learners[task]):
            e = self.position.get(m)
            if e is None or m == active or e in found:
                continue
            restore = self.to_restore(task, m)
            move = 0 if m == own or m in p.standbys[task] else 1
            prefer = 0 if m == own or m in p.lags[task] else 1
            found[e] = self.tiers.cost(*self.lead, self.same_rack(active, e), restore, move, prefer)
        return tuple(sorted(found.items()))

    def on(self, task: int, active: int, e: int, holders: dict[int, int]) -> int:
        if e in holders:
            return holders[e]
        return self.pool(task) + self.same_rack(active, e) * self.rack_penalty()


def standby_count(problem: Problem, eligible: list[int]) -> int:
    """Standbys per stateful task: as configured, at most one on every other member."""
    return min(problem.config.num_standby_replicas, max(0, len(eligible) - 1))


def place_standbys(problem: Problem, eligible: list[int], actives: list[int]) -> StandbyPlan:
    tasks = [t for t in range(len(problem.task_ids)) if problem.stateful[t]]
    replicas = standby_count(problem, eligible)
    none = [() for _ in problem.task_ids]
    if not tasks or replicas == 0:
        return StandbyPlan(list(none), replicas, False)
    position = {m: e for e, m in enumerate(eligible)}
    capacities = [problem.members[m].capacity for m in eligible]
    total = bounds(
        len(tasks) * (1 + replicas),
        capacities,
        tolerance_fraction(problem.config.balance_tolerance),
        cap=len(tasks),
    )
    held = [0] * len(eligible)
    for t in tasks:
        held[position[actives[t]]] += 1
    lower = [max(0, lo - a) for lo, a in zip(total.lower, held, strict=True)]
    upper = [max(0, hi - a) for hi, a in zip(total.upper, held, strict=True)]
    pooled = len(tasks) * len(eligible) > FULL_NETWORK_ARCS
    for soft in (False, True):
        costs = _Costs(problem, eligible, standby_tiers(problem, replicas, soft), soft)
        limits = (lower, upper, soft)
        result = _pooled(costs, tasks, actives, replicas, limits) if pooled else None
        if result is None and (not pooled or len(tasks) * len(eligible) <= FALLBACK_NETWORK_ARCS):
            result = _full(costs, tasks, actives, replicas, limits)
        if result is not None:
            return StandbyPlan(result, replicas, soft)
    raise RuntimeError("standby placement failed; this is a bug in the assignor")


def _sink_arcs(
    net: FlowNetwork,
    member: int,
    limits: tuple[list[int], list[int], bool],
    costs: _Costs,
    units: int,
) -> int:
    lower, upper, soft = limits
    sink = net.node(-units)
    for e in range(len(lower)):
        if not soft:
            net.arc(member + e, sink, 0, upper[e], lower[e])
            continue
        violation = costs.tiers.weights[0]
        net.arc(member + e, sink, 0, lower[e])
        net.arc(member + e, sink, violation, upper[e] - lower[e])
        net.arc(member + e, sink, 2 * violation, units)
    return sink


def _full(
    costs: _Costs,
    tasks: list[int],
    actives: list[int],
    replicas: int,
    limits: tuple[list[int], list[int], bool],
) -> list[tuple[int, ...]] | None:
    """The exact network: one arc per task and allowed member."""
    eligible = costs.eligible
    net = FlowNetwork()
    member = net.nodes(len(eligible))
    _sink_arcs(net, member, limits, costs, len(tasks) * replicas)
    arcs: list[tuple[int, int, int]] = []
    for t in tasks:
        node = net.node(replicas)
        holders = dict(costs.holders(t, actives[t]))
        for e, m in enumerate(eligible):
            if m != actives[t]:
                arcs.append(
                    (net.arc(node, member + e, costs.on(t, actives[t], e, holders), 1), t, m)
                )
    flows = net.solve()
    if flows is None:
        return None
    result: list[list[int]] = [[] for _ in costs.problem.task_ids]
    for arc, t, m in arcs:
        if flows[arc]:
            result[t].append(m)
    return [tuple(sorted(r)) for r in result]


def _pooled(
    costs: _Costs,
    tasks: list[int],
    actives: list[int],
    replicas: int,
    limits: tuple[list[int], list[int], bool],
) -> list[tuple[int, ...]] | None:
    """The compressed network, then :func:`deal`; ``None`` if the deal fails or it is infeasible."""
    eligible = costs.eligible
    net = FlowNetwork()
    member = net.nodes(len(eligible))
    _sink_arcs(net, member, limits, costs, len(tasks) * replicas)
    classes: dict[str | None, int] = {}
    bundles: dict[tuple[int, int, tuple[tuple[int, int], ...]], list[int]] = defaultdict(list)
    for t in tasks:
        a = actives[t]
        bundles[(a, costs.pool(t), costs.holders(t, a))].append(t)
    pool_of: dict[str | None, list[tuple[int, int]]] = {}
    for a, _, _ in bundles:
        rack = costs.problem.members[a].rack
        if rack not in classes:
            node = classes[rack] = net.node()
            pool_of[rack] = [
                (
                    net.arc(
                        node,
                        member + e,
                        costs.rack_penalty() * (rack is not None and costs.racks[e] == rack),
                        len(tasks) * replicas,
                    ),
                    e,
                )
                for e in range(len(eligible))
            ]
    plan = []
    for (a, pool_cost, holders), group in bundles.items():
        node = net.node(len(group) * replicas)
        out = [(net.arc(node, member + e, c, len(group)), e) for e, c in holders]
        pool_arc = net.arc(
            node, classes[costs.problem.members[a].rack], pool_cost, len(group) * replicas
        )
        plan.append((group, a, out, pool_arc))
    flows = net.solve()
    if flows is None:
        return None
    chosen: list[list[int]] = [[] for _ in costs.problem.task_ids]
    wanting: dict[str | None, list[int]] = defaultdict(list)
    for group, a, out, _ in plan:
        fill = [(0, i) for i in range(len(group))]
        for arc, e in out:
            taken = heapq.nsmallest(flows[arc], fill)
            for _, i in taken:
                chosen[group[i]].append(eligible[e])
            bumped = {i for _, i in taken}
            fill = [(k + (i in bumped), i) for k, i in fill]
        for t in group:
            wanting[costs.problem.members[a].rack].extend([t] * (replicas - len(chosen[t])))
    for rack, arcs in pool_of.items():
        slots = {eligible[e]: flows[arc] for arc, e in arcs if flows[arc]}
        if not deal(sorted(wanting[rack]), slots, chosen, actives):
            return None
    return [tuple(sorted(c)) for c in chosen]
