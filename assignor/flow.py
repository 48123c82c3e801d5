"""A min-cost flow network with lower bounds, solved exactly by OR-tools.

The solver (``SimpleMinCostFlow``, cost-scaling push-relabel in C++) was chosen by measurement
(docs/dependencies.md). It knows no lower bounds, so an arc ``u -> v`` with bounds
``[lo, hi]`` becomes an arc of capacity ``hi - lo`` plus ``lo`` units of demand at ``u`` and
supply at ``v``; flows are reported with ``lo`` added back. Integral capacities give an
integral optimum (total unimodularity), which is why a flow solution is an assignment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ortools.graph.python import min_cost_flow  # type: ignore[import-untyped]  # no py.typed

# From this many arcs on, the network goes to the solver as numpy arrays, in one call;
# a smaller one goes an arc at a time, which costs less than importing numpy, a cost every
# ``segue assign`` would pay (docs/ci.md, "CLI start-up"). The solver gets the same arcs in
# the same order either way, so the same flow.
ARRAY_ARCS = 10_000


class FlowNetwork:
    """Nodes and arcs are plain integers handed out in order."""

    __slots__ = ("_costs", "_heads", "_his", "_los", "_supply", "_tails")

    def __init__(self) -> None:
        self._supply: list[int] = []
        self._tails: list[int] = []
        self._heads: list[int] = []
        self._los: list[int] = []
        self._his: list[int] = []
        self._costs: list[int] = []

    def node(self, supply: int = 0) -> int:
        self._supply.append(supply)
        return len(self._supply) - 1

    def nodes(self, count: int) -> int:
        """Adds ``count`` nodes without supply; returns the first one's number."""
        first = len(self._supply)
        self._supply.extend([0] * count)
        return first

    def add_supply(self, node: int, amount: int) -> None:
        self._supply[node] += amount

    def arc(self, tail: int, head: int, cost: int, upper: int, lower: int = 0) -> int:
        if lower:
            self._supply[tail] -= lower
            self._supply[head] += lower
        self._tails.append(tail)
        self._heads.append(head)
        self._los.append(lower)
        self._his.append(upper)
        self._costs.append(cost)
        return len(self._tails) - 1

    def solve(self) -> list[int] | None:
        """Flow on every arc of a cheapest feasible flow, or ``None`` if none is feasible."""
        if not self._tails:
            return [] if not any(self._supply) else None
        solver = min_cost_flow.SimpleMinCostFlow()
        flows = self._load_arrays(solver) if len(self._tails) >= ARRAY_ARCS else self._load(solver)
        status = solver.solve()
        if status != solver.OPTIMAL:
            if status in (solver.INFEASIBLE, solver.UNBALANCED):
                return None
            raise RuntimeError(f"min-cost flow solver failed: {status.name}")
        return flows()

    def _load(self, solver: Any) -> Callable[[], list[int]]:
        """Hands the network to ``solver`` an arc and a node at a time; returns how to read
        the flows once solved."""
        add = solver.add_arc_with_capacity_and_unit_cost
        arcs = [
            add(tail, head, hi - lo, cost)
            for tail, head, lo, hi, cost in zip(
                self._tails, self._heads, self._los, self._his, self._costs, strict=True
            )
        ]
        for node, supply in enumerate(self._supply):
            solver.set_node_supply(node, supply)
        flow = solver.flow
        return lambda: [flow(arc) + lo for arc, lo in zip(arcs, self._los, strict=True)]

    def _load_arrays(self, solver: Any) -> Callable[[], list[int]]:
        """:meth:`_load` in one call per kind, through numpy arrays."""
        import numpy as np

        los = np.asarray(self._los, dtype=np.int64)
        arcs = solver.add_arcs_with_capacity_and_unit_cost(
            np.asarray(self._tails, dtype=np.int32),
            np.asarray(self._heads, dtype=np.int32),
            np.asarray(self._his, dtype=np.int64) - los,
            np.asarray(self._costs, dtype=np.int64),
        )
        solver.set_nodes_supplies(
            np.arange(len(self._supply), dtype=np.int32), np.asarray(self._supply, dtype=np.int64)
        )

        def flows() -> list[int]:
            result: list[int] = (
                np.asarray(solver.flows(np.asarray(arcs, dtype=np.int32)), dtype=np.int64) + los
            ).tolist()
            return result

        return flows
