"""What the simulator asks of a policy, and the balance test every policy is held to."""

from __future__ import annotations

from typing import Protocol

from segue.pipeline.state import Cluster


class Controller(Protocol):
    """A policy's running state: use a fresh one for every run."""

    name: str
    # On a partition expansion, does a stateful sub-topology keep its tasks (Segue, seed
    # 004's mapping) or gain new empty ones (the baselines: see docs/pipeline.md)?
    maps_partitions: bool

    @property
    def lag_floor(self) -> float:
        """A copy this close to its changelog end (records) may change what ``step`` does
        (read-only here, so a field and a property both satisfy it)."""

    def step(self, c: Cluster, now: float) -> None:
        """Look at ``c`` at ``now`` and act: publish, create and delete pods."""

    def quiet(self, c: Cluster, now: float) -> bool:
        """Nothing in flight by the policy's own account (no warm-ups, no pending moves)."""

    def idle_until(self, c: Cluster, now: float) -> float:
        """Until when ``step`` would change nothing, if the cluster stays as it is but for
        time passing steadily (:mod:`segue.pipeline.steady`); ``now``: it may act at once."""

    def skipped(self, start: float, ticks: int, tick: float) -> None:
        """The simulator skipped ``ticks`` ticks from ``start`` (all before ``idle_until``):
        move any look schedule on as if ``step`` had run in each."""


def balanced(c: Cluster, now: float) -> bool:
    """The spec's pods all run the assignment in force, which is balanced and complete.

    Balanced as KAFKA-10121 (seed 001) counts it for actives: member counts differ by at
    most one. Complete: every task is processed by its owner with a current store.
    """
    if c.published is None or len(c.pods) != c.replicas:
        return False
    if set(c.published.members) != set(c.pods):
        return False
    if any(not p.up(now) or p.applied != c.published.generation for p in c.pods.values()):
        return False
    counts = [len(r.active) for r in c.published.members.values()]
    if counts and max(counts) - min(counts) > 1:
        return False
    owners = c.owners()
    return all(
        t in owners
        and c.running.get(t) == owners[t]
        and (not task.stateful or c.lag(c.pods[owners[t]], t) < 1e-9)
        for t, task in c.tasks.items()
    )
