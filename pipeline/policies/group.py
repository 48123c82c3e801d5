"""What the baselines share: a StatefulSet's pods and a Kafka consumer group's membership.

The baselines run as plain Kafka Streams apps do on Kubernetes: a StatefulSet keeps pods
``<app>-0 .. <app>-(replicas-1)`` (recreating a lost one at once, deleting the highest
ordinals on a scale-down), and a member joins the group when its pod runs. A member that
shuts down sends LeaveGroup (an immediate rebalance); a lost one is noticed only after
``session.timeout.ms`` (45 s since KIP-735). The target placement is balanced and sticky.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from segue.pipeline.state import Cluster, pod_name
from segue.protocol.tasks import task_sort_key

SESSION_TIMEOUT = 45.0  # session.timeout.ms default since Kafka 3.0 (KIP-735)


@dataclass
class Group:
    """The StatefulSet and the group coordinator's view; ``changed``: rebalance now."""

    session_timeout: float = SESSION_TIMEOUT
    missing_since: dict[str, float] = field(default_factory=dict)
    incarnation: dict[str, float] = field(default_factory=dict)  # member -> its pod's birth

    def reconcile(self, c: Cluster, now: float) -> list[str]:
        """Keep the StatefulSet's pods; the members a rebalance now would have (or [])."""
        if not self.incarnation and c.published is not None:
            self.incarnation = {m: c.pods[m].created for m in c.published.members if m in c.pods}
        wanted = {pod_name(c.app, i) for i in range(c.replicas)}
        for name in sorted(set(c.pods) - wanted):
            c.delete(name)  # scale-down: graceful, LeaveGroup sent
        for name in sorted(wanted - set(c.pods)):
            c.create(name, now)
            self.missing_since.setdefault(name, now)
        members = sorted(n for n, p in c.pods.items() if p.up(now))
        current = set(c.published.members) if c.published else set()
        for gone in current - set(c.pods):
            self.missing_since.setdefault(gone, now)
        # a recreated pod is a new consumer (dynamic membership): it joins afresh
        joined = {m for m in members if m not in current or self._reborn(c, m)}
        left = {m for m in current - set(members) if m not in wanted}
        timed_out = {
            m
            for m in current - set(members)
            if m in wanted and now - self.missing_since.get(m, now) >= self.session_timeout
        }
        for m in joined:
            self.missing_since.pop(m, None)
        grown = bool(set(c.tasks) - set(c.owners()))  # a metadata change: new partitions
        if not (joined or left or timed_out or grown):
            return []
        self.incarnation = {m: c.pods[m].created for m in members}
        return members

    def idle(self, c: Cluster, now: float) -> bool:
        """``reconcile`` would change nothing: the StatefulSet's pods all run, each is the
        member it was, and every task has an owner."""
        wanted = {pod_name(c.app, i) for i in range(c.replicas)}
        current = set(c.published.members) if c.published else set()
        return (
            set(c.pods) == wanted == current
            and all(p.up(now) and not self._reborn(c, n) for n, p in c.pods.items())
            and not set(c.tasks) - set(c.owners())
        )

    def _reborn(self, c: Cluster, member: str) -> bool:
        born = self.incarnation.get(member)
        return born is not None and c.pods[member].created != born


def sticky_balanced(
    tasks: list[str], members: list[str], owner: dict[str, str]
) -> dict[str, list[str]]:
    """Balanced (counts differ by at most one) keeping as many tasks on their owner as fit."""
    out: dict[str, list[str]] = {m: [] for m in members}
    if not members:
        return out
    base, extra = divmod(len(tasks), len(members))
    cap = {m: base + (1 if i < extra else 0) for i, m in enumerate(members)}
    rest = []
    for t in sorted(tasks, key=task_sort_key):
        m = owner.get(t)
        if m in out and len(out[m]) < cap[m]:
            out[m].append(t)
        else:
            rest.append(t)
    for t in rest:
        m = min(members, key=lambda m: (len(out[m]) - cap[m], len(out[m]), m))
        out[m].append(t)
    return out
