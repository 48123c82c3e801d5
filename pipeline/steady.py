"""Skipping the ticks in which the cluster only moves linearly: the simulator's fast path.

Most of a scenario's hour, and most of a scale-out, is a run of alike ticks: every
running pod runs the generation in force (pods still starting do nothing), every task
that is processed either has no input waiting or is saturated (its pod's water level is
below its demand: :func:`_backlogs`), and every other copy either follows its active
(catching up, each tick, exactly what the active appended the tick before) or restores
at its full rate without reaching the changelog end. Such a tick changes the cluster by
fixed amounts (changelog ends, copy offsets, backlogs; records processed and late, bytes
restored, task- and pod-seconds), so ``k`` of them are applied at once by
:func:`leap`. :mod:`.simulate` leaps up to the next thing that can make a tick differ: a
scenario event or load step, a pod starting, a restoring copy coming within
``lag_floor`` of its changelog end (where a policy may act on it), or the controller's
own next look (``Controller.idle_until``).

The fast path is exact up to float rounding (``k * x`` for ``x`` added ``k`` times):
``tests/pipeline/test_steady.py`` runs fleets with it on and off under every policy and
compares every metric. It is off when a history is recorded, which wants a row per tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .metrics import Meter
from .physics import capacity
from .state import Cluster, Pod

EPSILON = 1e-9
MARGIN = 2.0  # records: policies see integer offsets; stop this far from any threshold


@dataclass(frozen=True)
class Copy:
    """A copy that restores ``step`` changelog records every tick."""

    pod: Pod
    task: str
    step: float


@dataclass(frozen=True)
class Linear:
    """One tick, ready to be repeated ``ticks`` times at most (and only before ``until``)."""

    processed: dict[str, float]  # served task -> records processed per tick
    waiting: dict[str, float]  # unserved task -> records arriving per tick (into backlog)
    copies: tuple[Copy, ...]
    ticks: float  # how many alike ticks the copies' lags and the backlogs allow
    until: float  # a starting pod runs from then: a tick ending at or after it differs
    drift: dict[str, float] = field(default_factory=dict)  # saturated task -> backlog/tick
    late: float = 0.0  # records processed late in the first tick
    late_slope: float = 0.0  # ... and how much more in each tick after it


def linear(c: Cluster, now: float, tick: float, rate: float, lag_floor: float) -> Linear | None:
    """The tick from ``now`` and how long it repeats, or ``None`` if it is not linear."""
    if c.published is None:
        return None
    gen = c.published.generation
    if any(p.up(now) and p.applied != gen for p in c.pods.values()):
        return None  # a pod takes up a generation at the end of this tick
    inflow = c.inflow(rate)
    held = c.published.members
    served: dict[str, str] = {}
    tasks, pods = c.tasks, c.pods
    for t, owner in c.running.items():
        pod = pods.get(owner)
        if pod is None or now < pod.up_at:  # not pod.up(now), inlined: every tick asks
            continue
        x = tasks[t]
        if not x.stateful or x.end - pod.restored.get(t, 0.0) < EPSILON:
            served[t] = owner  # its store is current (_lag below EPSILON)
    backlogs = _backlogs(c, served, tick, inflow)
    if backlogs is None:
        return None
    processed, drift, late, late_slope, ticks = backlogs
    copies: list[Copy] = []
    for name, pod in pods.items():
        roles = held.get(name)
        if roles is None or now < pod.up_at:
            continue  # holds nothing, or does nothing until it runs
        for t in roles.tasks():
            task = tasks.get(t)
            if task is None or not task.stateful or served.get(t) == name:
                continue
            behind = task.end - pod.restored.get(t, 0.0)
            lag = behind if behind > 0.0 else 0.0  # c.lag(pod, t), inlined
            grow = processed.get(t, 0.0) * task.changelog_ratio
            full = task.restore_rate * tick
            if abs(lag - grow) < EPSILON and grow <= full:
                if grow > 0:
                    copies.append(Copy(pod, t, grow))  # a follower: stays one tick behind
                continue
            # restoring at full rate: alike while every tick starts above the floor
            floor = max(full + MARGIN, lag_floor + MARGIN)
            if lag < floor:
                return None
            drop = full - grow
            ticks = min(ticks, math.floor((lag - floor) / drop) + 1 if drop > 0 else math.inf)
            copies.append(Copy(pod, t, full))
    waiting = {t: inflow[t] * tick for t in c.tasks if t not in served}
    starting = min((p.up_at for p in c.pods.values() if not p.up(now)), default=math.inf)
    return Linear(
        processed, waiting, tuple(copies), ticks, starting - tick, drift, late, late_slope
    )


def _backlogs(
    c: Cluster, served: dict[str, str], tick: float, inflow: dict[str, float]
) -> tuple[dict[str, float], dict[str, float], float, float, float] | None:
    """What each served task processes per tick, and for how many ticks that holds.

    A pod's rate is water-filled over its tasks' demand (backlog + arrivals,
    :func:`.physics.capacity`). A task served in full keeps its rate only with no
    backlog (else it drains it this tick: not linear). A *saturated* task (its demand
    above the water level) gets the level every tick, and its backlog drifts by
    arrivals minus the level, so it stays saturated, and its late records follow one
    branch of ``min(level, backlog)``, for a number of ticks known in closed form: an
    overloaded pod's growing backlogs are as linear as a quiet pod's."""
    share = capacity(c, served, tick, inflow)
    processed: dict[str, float] = {}
    drift: dict[str, float] = {}
    late = slope = 0.0
    ticks = math.inf
    for t in served:
        backlog, arrived = c.tasks[t].backlog, inflow[t] * tick
        give = min(share[t], backlog + arrived)
        processed[t] = give
        if give == backlog + arrived:  # served in full
            if backlog > EPSILON:
                return None  # draining the last of a backlog: the next tick differs
            continue
        if backlog + arrived - give < MARGIN:
            return None  # at the water level's edge
        step = arrived - give
        drift[t] = step
        if step < 0:  # draining: saturated while demand stays MARGIN above the level
            ticks = min(ticks, math.floor((backlog + arrived - give - MARGIN) / -step) + 1)
        if backlog >= give + MARGIN:  # late: the whole level while the backlog covers it
            late += give
            if step < 0:
                ticks = min(ticks, math.floor((backlog - give - MARGIN) / -step) + 1)
        elif backlog <= give - MARGIN:  # late: the backlog, drifting
            late += backlog
            slope += step
            if step > 0:
                ticks = min(ticks, math.floor((give - MARGIN - backlog) / step) + 1)
        else:
            return None
    return processed, drift, late, slope, ticks


def leap(c: Cluster, s: Linear, k: int, tick: float, meter: Meter) -> None:
    """Apply ``k`` alike ticks at once (see the module docstring)."""
    for cp in s.copies:
        cp.pod.restored[cp.task] = cp.pod.restored.get(cp.task, 0.0) + k * cp.step
        meter.restored(k * cp.step * c.tasks[cp.task].record_bytes)
    done = 0.0
    for t, per_tick in s.processed.items():
        task = c.tasks[t]
        done += per_tick
        if per_tick and task.stateful and task.changelog_ratio:
            task.end += k * per_tick * task.changelog_ratio
            c.pods[c.running[t]].restored[t] = task.end
    for t, per_tick in s.waiting.items():
        c.tasks[t].backlog += k * per_tick
    for t, per_tick in s.drift.items():
        c.tasks[t].backlog += k * per_tick
    meter.processed(k * done, late=k * s.late + s.late_slope * k * (k - 1) / 2)
    meter.tick(k * tick, unavailable=len(s.waiting), pods=len(c.pods))
