"""A lag-threshold autoscaler as KEDA's Apache Kafka scaler does it, moving tasks eagerly.

KEDA (https://keda.sh/docs/2.13/scalers/apache-kafka/: ``lagThreshold``, the "average
target value", defaults to 10, ``activationLagThreshold`` to 0) reads the consumer
group's total records lag every ScaledObject ``pollingInterval`` (30 s) and feeds it to
an HPA as an ``AverageValue`` target of ``lagThreshold`` per replica, so the HPA wants
``ceil(totalLag / lagThreshold)`` replicas, clamped to ``[minReplicaCount,
maxReplicaCount]`` and, with ``allowIdleConsumers: false`` (the default), to the
partition count. Below ``activationLagThreshold`` it wants the minimum. The HPA scales up
at once and down only to the highest recommendation of the last 300 s (its default
``scaleDown.stabilizationWindowSeconds``). The replicas it sets are then carried out by
a plain Kafka Streams group, :mod:`.eager` (what a KEDA user gets). Scale events in the
scenario are ignored: the autoscaler owns ``replicas``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from segue.pipeline.state import Cluster

from .eager import EagerController

LAG_THRESHOLD = 10.0  # KEDA's default lagThreshold
POLLING_INTERVAL = 30.0
STABILIZATION_WINDOW = 300.0


@dataclass
class KedaController:
    name: str = "keda"
    maps_partitions: bool = False
    lag_floor: float = 0.0  # it reads lags only when it acts for other reasons
    lag_threshold: float = LAG_THRESHOLD
    activation_lag_threshold: float = 0.0
    min_replicas: int = 1
    max_replicas: int = 100
    polling_interval: float = POLLING_INTERVAL
    stabilization_window: float = STABILIZATION_WINDOW
    mover: EagerController = field(default_factory=EagerController)
    next_poll: float = 0.0
    recommendations: deque[tuple[float, int]] = field(default_factory=deque)

    owned: int | None = None  # the replicas this autoscaler last set

    def step(self, c: Cluster, now: float) -> None:
        if self.owned is not None:
            c.replicas = self.owned  # a scenario's scale event is overridden at once
        if now >= self.next_poll:
            self.next_poll = now + self.polling_interval
            self.owned = c.replicas = self.replicas(c, now)
        self.mover.step(c, now)

    def quiet(self, c: Cluster, now: float) -> bool:
        return True

    def explain(self, c: Cluster, now: float) -> str | None:
        return None  # nothing of its own in flight: the cluster says it all

    def idle_until(self, c: Cluster, now: float, *, backlogs_fixed: bool = False) -> float:
        """The next poll, or with ``backlogs_fixed`` the first poll that would set other
        replicas: every poll before it wants the same and is only recorded
        (:meth:`skipped`). Most of an hour is such a steady stretch, 120 polls of it."""
        if self.owned is not None and c.replicas != self.owned:
            return now
        mover = self.mover.idle_until(c, now)
        if not backlogs_fixed or self.owned is None:
            return min(self.next_poll, mover)
        want = self.desired(c)
        if want > self.owned:
            return min(self.next_poll, mover)
        if want == self.owned:
            return mover  # every poll wants what is set
        # Below what it set, a poll keeps it while a recommendation of it is in the
        # window: the first poll past the last such one's expiry sets less.
        last = max((at for at, r in self.recommendations if r >= self.owned), default=None)
        if last is None:
            return min(self.next_poll, mover)
        return min(max(self.next_poll, last + self.stabilization_window), mover)

    def skipped(self, c: Cluster, start: float, ticks: int, tick: float) -> None:
        """Each poll due in the skipped ticks happened and wanted what one wants now:
        ``idle_until`` leaps over a poll only while the backlogs stay fixed (otherwise it
        ends the leap at the next poll, so none is due here)."""
        end = start + ticks * tick
        want: int | None = None
        while True:
            due = max(math.ceil(self.next_poll / tick - 1e-9) * tick, start)
            if due >= end - 1e-9:
                break
            self.next_poll = due + self.polling_interval
            want = self.desired(c) if want is None else want
            self._record(due, want)

    def desired(self, c: Cluster) -> int:
        lag = sum(t.backlog for t in c.tasks.values())
        if lag <= self.activation_lag_threshold:
            want = self.min_replicas
        else:
            want = math.ceil(lag / self.lag_threshold)
        first = min(x.subtopology for x in c.tasks.values())
        inputs = sum(1 for t in c.tasks.values() if t.subtopology == first)
        return max(self.min_replicas, min(want, self.max_replicas, inputs))

    def replicas(self, c: Cluster, now: float) -> int:
        want = self.desired(c)
        self._record(now, want)
        if want >= c.replicas:
            return want
        return max(r for _, r in self.recommendations)

    def _record(self, now: float, want: int) -> None:
        self.recommendations.append((now, want))
        while self.recommendations and self.recommendations[0][0] < now - self.stabilization_window:
            self.recommendations.popleft()
