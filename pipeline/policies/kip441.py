"""Kafka Streams' HighAvailabilityTaskAssignor (KIP-441, Kafka 2.6+), as seed 003 traces it.

``assignActiveStatefulTasks`` deals the stateful tasks round-robin over the clients in
process-id order (here: pod name order) and ignores who holds state; then
``assignActiveTaskMovements`` sends each task whose round-robin target is not
*caught up* (its store within ``acceptable.recovery.lag`` = 10,000 records of the
changelog end, or the current owner) back to a caught-up client, and gives the target a
*warm-up* replica, at most ``max.warmup.replicas`` = 2 at once. If anything was held
back, the leader schedules a *probing rebalance* after ``probing.rebalance.interval.ms``
= 10 minutes, when warmed-up clients count as caught up and their tasks move. A task
with no caught-up client goes to its target and restores there. Stateless tasks are
spread to even out the totals. The rebalance protocol is cooperative (KIP-429): only
the moved tasks stop. Warm-ups are picked in task-id order (seed 003: the order is
otherwise unspecified).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from segue.operator.scaling import Roles
from segue.pipeline.state import Cluster
from segue.protocol.tasks import task_sort_key

from .group import Group

ACCEPTABLE_RECOVERY_LAG = 10_000
MAX_WARMUP_REPLICAS = 2
PROBING_REBALANCE_INTERVAL = 600.0


@dataclass
class Kip441Controller:
    name: str = "kip441"
    maps_partitions: bool = False
    lag_floor: float = 0.0  # it reads lags only when it acts for other reasons
    acceptable_recovery_lag: int = ACCEPTABLE_RECOVERY_LAG
    max_warmup_replicas: int = MAX_WARMUP_REPLICAS
    probing_interval: float = PROBING_REBALANCE_INTERVAL
    group: Group = field(default_factory=Group)
    probe_at: float | None = None

    def step(self, c: Cluster, now: float) -> None:
        c.eager = False
        members = self.group.reconcile(c, now)
        if not members and self.probe_at is not None and now >= self.probe_at:
            members = sorted(n for n, p in c.pods.items() if p.up(now))
        if not members:
            return
        placed, warmups = self.assign(c, members)
        self.probe_at = now + self.probing_interval if warmups else None
        c.publish(
            c.next_generation(
                {
                    m: Roles(
                        active=tuple(sorted(placed[m], key=task_sort_key)),
                        standby=tuple(sorted(warmups.get(m, []), key=task_sort_key)),
                    )
                    for m in members
                }
            )
        )

    def quiet(self, c: Cluster, now: float) -> bool:
        return self.probe_at is None

    def explain(self, c: Cluster, now: float) -> str | None:
        if self.probe_at is not None:
            return f"a probing rebalance is due at t={self.probe_at:.0f} s"
        return None

    def idle_until(self, c: Cluster, now: float, *, backlogs_fixed: bool = False) -> float:
        if not self.group.idle(c, now):
            return now
        return math.inf if self.probe_at is None else self.probe_at

    def skipped(self, c: Cluster, start: float, ticks: int, tick: float) -> None:
        pass  # no look schedule: it acts on what it sees

    def assign(
        self, c: Cluster, members: list[str]
    ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        owner = c.owners()
        placed: dict[str, list[str]] = {m: [] for m in members}
        warmups: dict[str, list[str]] = {}
        left = self.max_warmup_replicas
        stateful = sorted((t for t, x in c.tasks.items() if x.stateful), key=task_sort_key)
        for i, t in enumerate(stateful):
            target = members[i % len(members)]
            caught = self._caught_up(c, t, members, owner.get(t))
            if target in caught or not caught:
                placed[target].append(t)
                continue
            keep = owner[t] if owner.get(t) in caught else caught[0]
            placed[keep].append(t)
            if left > 0:
                warmups.setdefault(target, []).append(t)
                left -= 1
        for t in sorted((t for t, x in c.tasks.items() if not x.stateful), key=task_sort_key):
            m = min(members, key=lambda m: (len(placed[m]), m))
            placed[m].append(t)
        return placed, warmups

    def _caught_up(self, c: Cluster, task: str, members: list[str], owner: str | None) -> list[str]:
        """Members whose store is within the acceptable lag, least behind first."""
        lags = {m: c.lag(c.pods[m], task) for m in members if task in c.pods[m].restored}
        caught = [m for m, lag in lags.items() if lag <= self.acceptable_recovery_lag]
        if owner in members and owner not in caught and c.running.get(task) == owner:
            caught.append(owner)
        return sorted(caught, key=lambda m: (lags.get(m, 0.0), m))
