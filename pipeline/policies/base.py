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

    def explain(self, c: Cluster, now: float) -> str | None:
        """Why the policy is not done, in its own words (Segue: what its status says), or
        None to leave it to :func:`unbalanced`. Asked once, at a run's end, if some
        disturbance never settled."""

    def idle_until(self, c: Cluster, now: float, *, backlogs_fixed: bool = False) -> float:
        """Until when ``step`` would change nothing, if the cluster stays as it is but for
        time passing steadily (:mod:`segue.pipeline.steady`); ``now``: it may act at once.
        ``backlogs_fixed``: no input backlog grows or drains meanwhile (every task is
        served and none saturated), so a policy that reads them reads the same."""

    def skipped(self, c: Cluster, start: float, ticks: int, tick: float) -> None:
        """The simulator skipped ``ticks`` ticks from ``start`` (all before ``idle_until``;
        ``c`` as it is after them):
        move any look schedule on as if ``step`` had run in each."""


def balanced(c: Cluster, now: float) -> bool:
    """The spec's pods all run the assignment in force, which is balanced and complete.

    Balanced as KAFKA-10121 (seed 001) counts it for actives: member counts differ by at
    most one. Complete: every task is processed by its owner with a current store.
    """
    return unbalanced(c, now) is None


def unbalanced(c: Cluster, now: float) -> str | None:
    """Why ``c`` is not :func:`balanced` at ``now`` (the first reason found), or None."""
    if c.published is None:
        return "no assignment published"
    if len(c.pods) != c.replicas:
        return f"{len(c.pods)} pods where the spec asks for {c.replicas}"
    if set(c.published.members) != set(c.pods):
        extra = sorted(set(c.published.members) - set(c.pods))
        missing = sorted(set(c.pods) - set(c.published.members))
        return f"the assignment's members are not the pods (no pod: {extra}, no member: {missing})"
    for name, p in c.pods.items():
        if not p.up(now):
            return f"pod {name} is not up"
        if p.applied != c.published.generation:
            return f"pod {name} runs generation {p.applied}, not {c.published.generation}"
    counts = [len(r.active) for r in c.published.members.values()]
    if counts and max(counts) - min(counts) > 1:
        return f"active tasks per member differ by more than one ({min(counts)}-{max(counts)})"
    owners = c.owners()
    for t, task in c.tasks.items():
        if t not in owners:
            return f"task {t} has no owner"
        if c.running.get(t) != owners[t]:
            return f"task {t} is not running on its owner {owners[t]}"
        if task.stateful and c.lag(c.pods[owners[t]], t) >= 1e-9:
            return f"task {t}'s store on {owners[t]} lags by {c.lag(c.pods[owners[t]], t):.0f}"
    return None
