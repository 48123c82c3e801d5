"""An independent, slow statement of what the assignor promises: bounds, costs, brute force.

Nothing here imports the assignor's internals: balances and costs are re-derived from the
request as docs/assignor.md states them, so a test comparing the two can fail.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

Request = dict[str, Any]


def floor_ceil(
    total: int, capacities: list[int], tolerance: float, cap: int | None = None
) -> list[tuple[int, int]]:
    """Floor/ceil of each capacity-weighted share (water-filled below ``cap``), widened."""
    weights = list(capacities)
    fixed: dict[int, Fraction] = {}
    while True:
        rest = total - sum(fixed.values())
        free = sum(w for i, w in enumerate(weights) if i not in fixed)
        share = {i: Fraction(rest * w, free) for i, w in enumerate(weights) if i not in fixed}
        over = [i for i, s in share.items() if cap is not None and s > cap]
        if not over:
            break
        for i in over:
            fixed[i] = Fraction(cap or 0)
    tol = Fraction(tolerance).limit_denominator(1_000_000)
    out = []
    for i in range(len(weights)):
        s = fixed.get(i, share.get(i, Fraction(0)))
        low, high = s * (1 - tol), s * (1 + tol)
        hi = -((-high.numerator) // high.denominator)
        out.append(
            (max(0, low.numerator // low.denominator), min(hi, cap) if cap is not None else hi)
        )
    return out


class View:
    """The request, indexed the simple way."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.tasks = {t["id"]: t for t in request["tasks"]}
        self.members = {m["id"]: m for m in request["members"]}
        self.eligible = [m["id"] for m in request["members"] if not m.get("leaving")]
        self.config = request.get("config", {})
        self.owner: dict[str, str] = {}
        self.standbys: dict[str, set[str]] = {t: set() for t in self.tasks}
        self.learners: dict[str, set[str]] = {t: set() for t in self.tasks}
        for name, held in request.get("current", {}).items():
            for t in held.get("active", []):
                self.owner[t] = name
            if name in self.members:
                for t in held.get("standby", []):
                    self.standbys[t].add(name)
                for t in held.get("learning", []):
                    self.learners[t].add(name)
        self.lags: dict[str, dict[str, int]] = {t: {} for t in self.tasks}
        for name, per in request.get("lags", {}).items():
            for t, lag in per.items():
                self.lags[t][name] = lag
        stateful = [t for t in self.tasks.values() if t["stateful"]]
        self.sizes = all(t.get("state_bytes") is not None for t in stateful)

    def acceptable(self) -> int:
        return int(self.config.get("acceptable_recovery_lag", 10_000))

    def caught_up(self, t: str, m: str) -> bool:
        if self.owner.get(t) == m:
            return True
        lag = self.lags[t].get(m)
        return lag is not None and lag <= self.acceptable()

    def weight(self, t: str) -> int:
        task = self.tasks[t]
        if not task["stateful"]:
            return 0
        return int(task["state_bytes"]) if self.sizes else 1

    def to_restore(self, t: str, m: str) -> int:
        """What is left to read on ``m``: the lag's share of the whole when both are known."""
        if self.caught_up(t, m):
            return 0
        whole, lag = self.tasks[t].get("changelog_records"), self.lags[t].get(m)
        if not self.sizes or not whole or lag is None:
            return self.weight(t)
        return -(-self.weight(t) * min(lag, whole) // whole)

    def stateful(self, t: str) -> bool:
        return bool(self.tasks[t]["stateful"])

    def subtopology(self, t: str) -> str:
        return t.split("_", maxsplit=1)[0]

    def capacities(self) -> list[int]:
        return [int(self.members[m].get("capacity", 1)) for m in self.eligible]

    def tolerance(self) -> float:
        return float(self.config.get("balance_tolerance", 0.0))

    def replicas(self) -> int:
        return min(int(self.config.get("num_standby_replicas", 0)), max(0, len(self.eligible) - 1))

    # -- the objective of the target actives (docs/assignor.md, "Costs")

    def active_cost(self, t: str, m: str) -> tuple[int, int, int]:
        own = self.owner.get(t)
        if m == own:
            return (0, 0, 0)
        if not self.stateful(t):
            return (1, 0, 2)
        restore = self.to_restore(t, m)
        if m in self.learners[t]:
            prefer = 0
        elif m in self.lags[t] or m in self.standbys[t]:
            prefer = 1
        else:
            prefer = 2
        return (1, restore, prefer)  # moves, then restore, then the preference

    def standby_cost(self, t: str, active: str, m: str) -> tuple[int, int, int, int]:
        rack = self.members[active].get("rack")
        same = int(rack is not None and self.members[m].get("rack") == rack)
        own = self.owner.get(t)
        restore = self.to_restore(t, m)
        move = 0 if m == own or m in self.standbys[t] else 1
        if m == own or m in self.lags[t]:
            prefer = 0
        elif m in self.standbys[t] or m in self.learners[t]:
            prefer = 1
        else:
            prefer = 2
        return (same, restore, move, prefer)

    # -- balances

    def active_violations(self, actives: dict[str, str]) -> list[str]:
        """Which of the three balances an active placement breaks (empty when balanced)."""
        problems = []
        caps, tol = self.capacities(), self.tolerance()
        groups: dict[str, list[str]] = {}
        for t in self.tasks:
            groups.setdefault(self.subtopology(t), []).append(t)
        checks = [("active", list(self.tasks))]
        checks.append(("stateful", [t for t in self.tasks if self.stateful(t)]))
        checks += [(f"subtopology {g}", ts) for g, ts in groups.items()]
        for name, ts in checks:
            limits = floor_ceil(len(ts), caps, tol)
            for i, m in enumerate(self.eligible):
                n = sum(1 for t in ts if actives[t] == m)
                if not limits[i][0] <= n <= limits[i][1]:
                    problems.append(f"{name} balance: {m} has {n}, bounds {limits[i]}")
        return problems

    def stateful_totals(
        self, actives: dict[str, str], standbys: dict[str, tuple[str, ...]]
    ) -> tuple[list[int], list[tuple[int, int]]]:
        stateful = [t for t in self.tasks if self.stateful(t)]
        limits = floor_ceil(
            len(stateful) * (1 + self.replicas()),
            self.capacities(),
            self.tolerance(),
            cap=len(stateful),
        )
        counts = [
            sum(1 for t in stateful if actives[t] == m or m in standbys.get(t, ()))
            for m in self.eligible
        ]
        return counts, limits


def all_active_placements(view: View) -> Iterator[dict[str, str]]:
    tasks = sorted(view.tasks)
    for combo in itertools.product(view.eligible, repeat=len(tasks)):
        yield dict(zip(tasks, combo, strict=True))


def best_active_cost(view: View) -> tuple[int, int, int]:
    best: tuple[int, int, int] | None = None
    for placement in all_active_placements(view):
        if view.active_violations(placement):
            continue
        cost = total_active_cost(view, placement)
        best = cost if best is None or cost < best else best
    assert best is not None, "no balanced placement exists"
    return best


def total_active_cost(view: View, placement: dict[str, str]) -> tuple[int, int, int]:
    parts = [view.active_cost(t, m) for t, m in placement.items()]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def best_standby_cost(view: View, actives: dict[str, str]) -> tuple[int, tuple[int, ...]]:
    """Least (balance violation, rack, restore, move, prefer) over every standby placement."""
    r = view.replicas()
    stateful = sorted(t for t in view.tasks if view.stateful(t))
    options = [
        list(itertools.combinations([m for m in view.eligible if m != actives[t]], r))
        for t in stateful
    ]
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in itertools.product(*options):
        standbys = dict(zip(stateful, combo, strict=True))
        cost = standby_objective(view, actives, standbys)
        best = cost if best is None or cost < best else best
    assert best is not None
    return best


def standby_objective(
    view: View, actives: dict[str, str], standbys: dict[str, tuple[str, ...]]
) -> tuple[int, tuple[int, ...]]:
    counts, limits = view.stateful_totals(actives, standbys)
    violation = sum(
        max(0, lo - n) + max(0, n - hi) for n, (lo, hi) in zip(counts, limits, strict=True)
    )
    parts = [view.standby_cost(t, actives[t], m) for t, ms in standbys.items() for m in ms]
    return violation, tuple(sum(p[i] for p in parts) for i in range(4))
