"""A closed loop without a cluster: a simulated stream app, the real signal
(:mod:`segue.operator.autoscale`) and the real HPA algorithm (:mod:`.hpa`).

The app: ``partitions`` input partitions, input at ``before`` records/s stepping to
``after`` at ``step_at`` (with seeded noise), every *active* member processing up to
``capacity`` records/s. A scale-up adds pods as learners: they restore for ``warmup``
seconds and add nothing until they take over (Segue's handover), while the old
members keep every active task. A scale-down's leaving pods keep processing for
``warmup`` seconds while their tasks warm up elsewhere, then go. Commits follow
processing (a 100 ms commit interval is below the 0.5 s tick). The operator samples
every ``sample_every`` seconds and publishes an :class:`AppSignal`; the HPA reads
``metric(signal)`` every 15 s. Generations are counted as Segue publishes them: one
when learners are assigned or leavers marked, one per tick in which pods take over or go.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from segue.operator.autoscale import AppSignal, Sample, Window, compute, remember

from .hpa import HPA


@dataclass(frozen=True)
class Scenario:
    partitions: int = 12
    capacity: float = 300.0  # records/s per active member
    before: float = 500.0
    after: float = 1000.0
    step_at: float = 60.0
    warmup: float = 30.0
    duration: float = 1200.0
    replicas: int = 2
    min_replicas: int = 2
    max_replicas: int = 12
    sample_every: float = 2.0
    hpa_every: float = 15.0
    noise: float = 0.05  # input jitter, a fraction of the rate
    seed: int = 0
    tick: float = 0.5

    @property
    def needed(self) -> int:
        """Members the stepped input needs in steady state."""
        return math.ceil(self.after / self.capacity)


@dataclass
class Trace:
    times: list[float] = field(default_factory=list)
    replicas: list[int] = field(default_factory=list)  # spec.replicas at each HPA sync
    lags: list[int] = field(default_factory=list)
    metrics: list[float] = field(default_factory=list)
    generations: int = 0

    @property
    def peak(self) -> int:
        return max(self.replicas)

    @property
    def final(self) -> int:
        return self.replicas[-1]

    def settle_time(self, step_at: float) -> float:
        """Seconds from the step to the last change of replicas."""
        last = step_at
        for t, a, b in zip(self.times[1:], self.replicas, self.replicas[1:], strict=False):
            if a != b:
                last = t
        return max(0.0, last - step_at)

    @property
    def reversals(self) -> int:
        """Times the direction of scaling flipped (up then down, or down then up)."""
        moves = [b - a for a, b in zip(self.replicas, self.replicas[1:], strict=False) if a != b]
        return sum(1 for a, b in itertools.pairwise(moves) if (a > 0) != (b > 0))

    @property
    def changes(self) -> int:
        return sum(1 for a, b in zip(self.replicas, self.replicas[1:], strict=False) if a != b)


Metric = Callable[[AppSignal], float]


def run(scenario: Scenario, metric: Metric, hpa: HPA, catch_up_seconds: float = 300.0) -> Trace:
    s, rng = scenario, random.Random(scenario.seed)
    parts = [("in", p) for p in range(s.partitions)]
    end = dict.fromkeys(parts, 0)
    committed = dict.fromkeys(parts, 0)
    owed = 0.0  # fractional records not yet written
    ready_at = {f"app-{i}": 0.0 for i in range(s.replicas)}  # pod -> when it takes over
    leaving: dict[str, float] = {}  # pod -> when it goes
    processed: dict[str, int] = dict.fromkeys(ready_at, 0)
    spec, window, signal = s.replicas, Window(), None
    trace = Trace()
    ticks = round(s.duration / s.tick)
    for k in range(ticks + 1):
        now = k * s.tick
        took_over = [p for p, t in ready_at.items() if now - s.tick < t <= now and now > 0]
        gone = [p for p, t in leaving.items() if t <= now]
        for pod in gone:
            del leaving[pod], ready_at[pod], processed[pod]
        trace.generations += bool(took_over) + bool(gone)
        # input
        rate = s.before if now < s.step_at else s.after
        owed += rate * s.tick * (1 + rng.uniform(-s.noise, s.noise))
        for i in range(int(owed)):
            end[parts[(k * 7 + i) % s.partitions]] += 1
        owed -= int(owed)
        # processing: active members share the partitions' backlog
        active = sorted(p for p, t in ready_at.items() if t <= now)
        budget = int(min(len(active), s.partitions) * s.capacity * s.tick)
        backlog = {p: end[p] - committed[p] for p in parts}
        total = sum(backlog.values())
        done = 0
        for p in parts:
            take = min(backlog[p], budget * backlog[p] // total) if total else 0
            committed[p] += take
            done += take
        for i, pod in enumerate(active):
            processed[pod] += done // len(active) + (1 if i < done % len(active) else 0)
        # the operator's step
        if k % round(s.sample_every / s.tick) == 0:
            sample = Sample(
                time=1_000_000.0 + now,
                log_end=dict(end),
                committed=dict(committed),
                processed=dict(processed),
                active=min(len(active), s.partitions),
                tasks=s.partitions,
            )
            window = remember(window, sample)
            if window.ready:
                signal = compute(
                    "ns",
                    "app",
                    spec,
                    window.samples,
                    previous=signal,
                    catch_up_seconds=catch_up_seconds,
                )
        # the HPA's sync
        if k % round(s.hpa_every / s.tick) == round(7 / s.tick) % round(s.hpa_every / s.tick):
            current = len(ready_at)
            desired = current if signal is None else hpa.decide(now, current, metric(signal))
            if desired != spec:
                trace.generations += 1
            scale(ready_at, leaving, processed, desired=desired, now=now, warmup=s.warmup)
            spec = desired
            trace.times.append(now)
            trace.replicas.append(spec)
            trace.lags.append(sum(end[p] - committed[p] for p in parts))
            trace.metrics.append(metric(signal) if signal else math.nan)
    return trace


def ordinal(pod: str) -> int:
    return int(pod.rsplit("-", 1)[1])


def scale(
    ready_at: dict[str, float],
    leaving: dict[str, float],
    processed: dict[str, int],
    *,
    desired: int,
    now: float,
    warmup: float,
) -> None:
    """Segue's order: cancel departures first, then create pods (learners); going
    down, the highest ordinals leave once their tasks have warmed up elsewhere."""
    members = sorted((p for p in ready_at if p not in leaving), key=ordinal)
    if desired > len(members):
        for pod in sorted(leaving, key=ordinal)[: desired - len(members)]:
            del leaving[pod]
            members.append(pod)
        free = (i for i in range(10_000) if f"app-{i}" not in ready_at)  # lowest first
        for _ in range(desired - len(members)):
            pod = f"app-{next(free)}"
            ready_at[pod], processed[pod] = now + warmup, 0
    for pod in members[desired:]:
        leaving[pod] = now + warmup
