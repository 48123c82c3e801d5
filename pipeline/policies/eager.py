"""The eager (stop-the-world) baseline: Kafka Streams before KIP-429/KIP-441.

Every rebalance revokes every task from every member before any is reassigned (the
eager rebalance protocol that KIP-429's incremental cooperative rebalancing replaced),
so each membership change stops the whole app for the rebalance; a task that lands on a
member without its state replays its changelog before it processes (the restore stall
KIP-441 and seed 000 set out to remove). The target is balanced and sticky. No
standbys (``num.standby.replicas`` defaults to 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from segue.operator.scaling import Roles
from segue.pipeline.state import Cluster
from segue.protocol.tasks import task_sort_key

from .group import Group, sticky_balanced


@dataclass
class EagerController:
    name: str = "eager"
    maps_partitions: bool = False
    lag_floor: float = 0.0  # it reads lags only when it acts for other reasons
    group: Group = field(default_factory=Group)

    def step(self, c: Cluster, now: float) -> None:
        c.eager = True
        members = self.group.reconcile(c, now)
        if not members:
            return
        placed = sticky_balanced(list(c.tasks), members, c.owners())
        c.publish(
            c.next_generation(
                {m: Roles(active=tuple(sorted(ts, key=task_sort_key))) for m, ts in placed.items()}
            )
        )

    def quiet(self, c: Cluster, now: float) -> bool:
        return True

    def explain(self, c: Cluster, now: float) -> str | None:
        return None  # nothing of its own in flight: the cluster says it all

    def idle_until(self, c: Cluster, now: float, *, backlogs_fixed: bool = False) -> float:
        return math.inf if self.group.idle(c, now) else now

    def skipped(self, c: Cluster, start: float, ticks: int, tick: float) -> None:
        pass  # no look schedule: it acts on what it sees
