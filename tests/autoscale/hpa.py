"""The HorizontalPodAutoscaler's algorithm (autoscaling/v2), written down so the closed-
loop tests and ``bench/autoscale/signal.py`` run the real thing, not a guess of it.

From https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
("Algorithm details", "Configurable scaling behavior", "Default Behavior") and the
controller it describes (kubernetes/pkg/controller/podautoscaler: replica_calculator.go
``GetExternalMetricReplicas`` / ``GetExternalPerPodMetricReplicas``; horizontal.go
``stabilizeRecommendationWithBehaviors``, ``convertDesiredReplicasWithBehaviorRate``):

- every ``--horizontal-pod-autoscaler-sync-period`` (15 s) it reads the metric;
- ``Value`` target: ``ratio = metric / target``; ``AverageValue``: ``ratio = metric /
  (target * current)``. If ``|1 - ratio| <= tolerance`` (0.1) it keeps ``current``, else
  ``ceil(ratio * current)`` (``Value``) or ``ceil(metric / target)`` (``AverageValue``);
- stabilization: the recommendation is held between the *lowest* recommendation of the
  last ``scaleUp.stabilizationWindowSeconds`` (default 0) and the *highest* of the last
  ``scaleDown.stabilizationWindowSeconds`` (default 300), starting from ``current``;
- rate policies: scale-up by at most ``max(100 %, 4 pods)`` per 15 s, scale-down by at
  most 100 % per 15 s (the defaults), counted from the replicas at the period's start;
- then ``minReplicas``/``maxReplicas``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class RatePolicy:
    kind: Literal["Pods", "Percent"]
    value: int
    period: float = 15.0


@dataclass(frozen=True)
class Rules:
    stabilization: float
    policies: tuple[RatePolicy, ...]


DEFAULT_UP = Rules(0.0, (RatePolicy("Percent", 100), RatePolicy("Pods", 4)))
DEFAULT_DOWN = Rules(300.0, (RatePolicy("Percent", 100),))


@dataclass
class HPA:
    target: float
    kind: Literal["Value", "AverageValue"]
    min_replicas: int
    max_replicas: int
    tolerance: float = 0.1
    up: Rules = DEFAULT_UP
    down: Rules = DEFAULT_DOWN
    recommendations: list[tuple[float, int]] = field(default_factory=list)
    changes: list[tuple[float, int]] = field(default_factory=list)  # (time, +added/-removed)

    def proposal(self, current: int, metric: float) -> int:
        """The replica count the metric alone asks for."""
        if self.kind == "Value":
            ratio = metric / self.target
            return current if abs(1 - ratio) <= self.tolerance else math.ceil(ratio * current)
        ratio = metric / (self.target * current) if current else math.inf
        return current if abs(1 - ratio) <= self.tolerance else math.ceil(metric / self.target)

    def decide(self, now: float, current: int, metric: float) -> int:
        """One sync: the replicas to write to ``/scale``."""
        proposed = self.proposal(current, metric)
        self.recommendations.append((now, proposed))
        window = max(self.up.stabilization, self.down.stabilization)
        self.recommendations = [(t, r) for t, r in self.recommendations if t > now - window]
        recent = [r for t, r in self.recommendations if t > now - self.up.stabilization]
        up = min(recent or [proposed])
        down = max(r for t, r in self.recommendations if t > now - self.down.stabilization)
        desired = min(max(current, up), down)
        if desired > current:
            desired = min(desired, self._limit(now, current, self.up, +1), self.max_replicas)
        elif desired < current:
            desired = max(desired, self._limit(now, current, self.down, -1), self.min_replicas)
        desired = min(max(desired, self.min_replicas), self.max_replicas)
        if desired != current:
            self.changes.append((now, desired - current))
        return desired

    def _limit(self, now: float, current: int, rules: Rules, sign: int) -> int:
        """The furthest the rate policies let it go (selectPolicy Max: the most change)."""
        limits = []
        for policy in rules.policies:
            moved = sum(d for t, d in self.changes if t > now - policy.period and d * sign > 0)
            start = current - moved
            if policy.kind == "Pods":
                limits.append(start + sign * policy.value)
            elif sign > 0:
                limits.append(math.ceil(start * (1 + policy.value / 100)))
            else:
                limits.append(int(start * (1 - policy.value / 100)))
        return max(limits) if sign > 0 else min(limits)
