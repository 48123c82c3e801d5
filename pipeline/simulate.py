"""Replay one :class:`~.scenario.Scenario` under one policy: a fixed-tick event simulation.

Time advances in ticks of ``tick`` seconds (1 s by default: finer than any timeout the
policies know, coarse enough for a day of one app in well under a second). In each tick,
in order: the scenario's events due by then happen (replicas change, a pod and its state
vanish, partitions grow), the policy looks and acts (:class:`~.policies.Controller`),
then :func:`~.physics.advance` moves pods, restores and processing on by one tick. The
run is a pure function of (scenario, policy, tick): nothing here reads a clock or a
global random source (``seed`` is handed to nothing yet and kept for policies that
will randomise; the state machine and the assignor are deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from segue.protocol.tasks import task_id

from .history import snapshot
from .metrics import Meter, Outcome
from .physics import advance
from .policies.base import Controller, balanced, unbalanced
from .scenario import HistoryRecord, PartitionsExpanded, PodLost, ScaleTo, Scenario
from .state import Cluster, Task, initial, pod_name
from .steady import Linear, leap, linear

# A tick computed by :func:`_leap` and not leapt, with the (instant, cluster version,
# rate) it holds for: the next iteration reuses it unless a look or an event changed
# the cluster (``Cluster.version``), which a busy look mostly does not.
Kept = tuple[tuple[float, int, float], Linear | None] | None


def simulate(
    scenario: Scenario,
    controller: Controller,
    *,
    seed: int = 0,
    tick: float = 1.0,
    record: Callable[[HistoryRecord], None] | None = None,
    fast: bool = True,
) -> Outcome:
    """Run ``scenario`` for its ``duration`` under ``controller``; what it cost.
    ``fast``: skip steady ticks in closed form (:mod:`.steady`; off when recording)."""
    del seed  # deterministic without it (see the module docstring)
    fast = fast and record is None
    c = initial(scenario)
    meter = Meter()
    events = sorted(scenario.events, key=lambda e: e.at)
    changes = sorted({e.at for e in events} | {step.at for step in scenario.load})
    stateful = {t for t, x in c.tasks.items() if x.stateful}
    steps = round(scenario.duration / tick)
    i = 0
    kept: Kept = None
    while i < steps:
        now = i * tick
        while events and events[0].at <= now:
            _happen(c, events.pop(0), controller.maps_partitions)
            meter.disturbance(now)
            stateful = {t for t, x in c.tasks.items() if x.stateful}
        before, restored = c.published, meter.bytes
        handovers = meter.handovers
        controller.step(c, now)
        if c.published is not None and c.published is not before:
            subs = {t: x.subtopology for t, x in c.tasks.items()}
            meter.generation(before, c.published, stateful, subs)
        rate = scenario.rate_at(now)
        # A linear tick is applied in closed form (exact: tests/pipeline/test_steady.py),
        # and the same regime then serves the leap that follows.
        s = _linear(c, now, tick, rate, controller.lag_floor, kept=kept) if fast else None
        if (
            s is not None
            and s.ticks >= 1
            and (s.until == math.inf or math.ceil(s.until / tick - 1e-9) > i)
        ):
            leap(c, s, 1, tick, meter)
            s = replace(s, ticks=s.ticks - 1, late=s.late + s.late_slope)
        else:
            s = None
            advance(c, now, tick, rate, meter)
        i += 1
        settled = balanced(c, now + tick) and controller.quiet(c, now + tick)
        if settled:
            meter.settled(now + tick)
        if record is not None:
            moved, nbytes = meter.handovers - handovers, meter.bytes - restored
            record(snapshot(c, now + tick, moved, nbytes, balanced=settled))
        if fast:
            k, kept = _leap(
                c,
                controller,
                changes=changes,
                i=i,
                steps=steps,
                tick=tick,
                rate=rate,
                meter=meter,
                regime=s,
            )
            i += k
    meter.late += sum(t.backlog for t in c.tasks.values())  # still waiting: late by now
    why = None
    if None in meter.balanced:
        end = steps * tick
        why = (
            controller.explain(c, end)
            or unbalanced(c, end)
            or "balanced, but the policy still has work in flight"
        )
    return _outcome(scenario, controller.name, meter, why)


def _linear(
    c: Cluster, now: float, tick: float, rate: float, lag_floor: float, *, kept: Kept
) -> Linear | None:
    """The tick from ``now``, or the one :func:`_leap` kept for it if nothing changed since."""
    if kept is not None and kept[0] == (now, c.version, rate):
        return kept[1]
    return linear(c, now, tick, rate, lag_floor)


def _leap(
    c: Cluster,
    controller: Controller,
    *,
    changes: list[float],
    i: int,
    steps: int,
    tick: float,
    rate: float,
    meter: Meter,
    regime: Linear | None = None,
) -> tuple[int, Kept]:
    """Skip the steady ticks from tick ``i`` up to the next one where something may
    happen (an event or load step due, the controller's next look); how many, and the
    tick it computed for ``i`` if it skipped none (the next look may leave it standing).
    ``regime``: the linear tick just applied, still good for ``regime.ticks`` more."""
    now = i * tick
    s = regime if regime is not None else linear(c, now, tick, rate, controller.lag_floor)
    kept: Kept = ((now, c.version, rate), s) if regime is None else None
    if s is None:
        return 0, kept
    fixed = not any(s.waiting.values()) and not any(s.drift.values())
    until = min(controller.idle_until(c, now, backlogs_fixed=fixed), s.until, steps * tick)
    until = min([until, *(at for at in changes if at > now - tick)])
    # tick j is the first to see a change at ``at`` if j * tick >= at: leap to before it
    k = min(steps, math.ceil(until / tick - 1e-9)) - i
    k = int(min(k, s.ticks))
    if k <= 0:
        return 0, kept
    leap(c, s, k, tick, meter)
    controller.skipped(c, now, k, tick)
    return k, None


def _happen(c: Cluster, event: ScaleTo | PodLost | PartitionsExpanded, maps: bool) -> None:
    """``maps``: the policy keeps a stateful sub-topology's tasks on an expansion (seed 004)."""
    if isinstance(event, ScaleTo):
        c.replicas = event.replicas
    elif isinstance(event, PodLost):
        c.delete(pod_name(c.app, event.ordinal))
    else:
        c.sources[event.subtopology] = event.partitions
        c.version += 1
        like = next(t for t in c.tasks.values() if t.subtopology == event.subtopology)
        if maps and like.stateful:
            return  # the same tasks read more partitions: partition p -> task p mod count
        for p in range(event.partitions):
            c.tasks.setdefault(
                task_id(event.subtopology, p),
                Task(
                    event.subtopology,
                    p,
                    like.stateful,
                    like.record_bytes,
                    like.restore_rate,
                    like.changelog_ratio,
                ),
            )


def _outcome(scenario: Scenario, policy: str, m: Meter, unbalanced: str | None) -> Outcome:
    times = tuple(m.balanced)
    return Outcome(
        scenario=scenario.name,
        policy=policy,
        time_to_balance=None if None in times else max(times, default=0.0),  # type: ignore[type-var]
        unbalanced=unbalanced,
        balance_times=times,
        task_seconds_unavailable=m.unavailable,
        records_processed_late=m.late,
        records_processed=m.done,
        state_bytes_restored=m.bytes,
        generations_published=m.generation_count,
        handovers=m.handovers,
        peak_active_skew=m.skew[0],
        peak_stateful_skew=m.skew[1],
        peak_subtopology_skew=m.skew[2],
        final_active_skew=m.last_skew[0],
        pod_hours=m.pod_seconds / 3600.0,
    )
