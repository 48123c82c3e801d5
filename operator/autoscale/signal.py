"""The signal: how far behind an app is, how soon it catches up, and how many members
it needs. Pure: the window of samples and the previous signal in, an :class:`AppSignal`
out. docs/autoscaling.md writes the same maths down with a worked example.

With ``L`` the lag (records), ``I`` the input rate, ``P`` the processing rate (records/s,
:mod:`.rates`), ``c`` the capacity of one active member, ``n`` the active members and
``r`` = ``spec.replicas`` (the members once the scale in flight lands):

``seconds_to_catch_up``
    ``0`` if ``L == 0``. If the app **keeps up** (``L <= max(P, I) * SLACK_SECONDS``:
    less than a second of input queued, what a worker holds between two 100 ms commits)
    it is ``L / max(P, I)``, the time to drain what is queued: ``L / (P - I)`` there
    divides a commit's worth of records by the noise of two equal rates and would flap
    between hours and ``inf`` on a healthy app. Otherwise ``L / (P - I)`` if ``P > I``,
    else ``inf`` (falling behind, or not processing).
``projected_seconds_to_catch_up``
    The same with ``P`` replaced by ``c * r``: the capacity once pending handovers land,
    each learner taking over as fast as today's active members process. Without a
    measured ``c`` it is ``seconds_to_catch_up``.
``replicas_needed`` (what an HPA should target: ``AverageValue`` 1)
    ``(I + L / catch_up_seconds) / c``: members to absorb the input and drain today's
    lag within ``catch_up_seconds`` (the Flink autoscaler's catch-up duration), capped at
    the input task count (more members get no input task). It depends on neither ``r``
    nor learners: a scale in flight does not raise it, so an HPA does not add pods while
    the last ones warm up. ``c`` is measured while behind (:mod:`.rates`), else the
    previous signal's ``c`` (so a drop in input can scale down), else ``P / n`` (a lower
    bound: the app keeps up, so the need is ``~n``: hold). Unknown (nothing processed
    yet): ``r``, hold.

Seconds may be ``inf``; Prometheus carries ``+Inf``, but consumers that cannot (the
external metrics API, JSON) must clamp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from segue.operator.autoscale.board import AppSignal
from segue.operator.autoscale.rates import rates
from segue.operator.autoscale.sample import Sample

SLACK_SECONDS = 1.0  # a lag below this many seconds of input is a pipeline, not a backlog
CATCH_UP_SECONDS = 300  # drain a backlog within this: spec.autoscaling.catchUpSeconds' default


def catch_up(lag: float, drain: float, inflow: float) -> float:
    """Seconds for ``drain`` records/s to clear ``lag`` while ``inflow`` keeps coming."""
    if lag <= 0:
        return 0.0
    if lag <= max(drain, inflow) * SLACK_SECONDS:
        return lag / max(drain, inflow)
    return lag / (drain - inflow) if drain > inflow else math.inf


def compute(
    namespace: str,
    app: str,
    replicas: int,
    window: Sequence[Sample],
    *,
    previous: AppSignal | None = None,
    catch_up_seconds: float = CATCH_UP_SECONDS,
) -> AppSignal:
    """The signal of the newest sample of ``window`` (oldest first, non-empty)."""
    last = window[-1]
    measured = rates(window)
    lag, i, p = last.lag, measured.input_rate, measured.processing_rate
    capacity = measured.capacity
    if capacity is None and previous is not None and previous.capacity_per_member > 0:
        capacity = max(previous.capacity_per_member, p / last.active if last.active else 0.0)
    if capacity is None and last.active and p > 0:
        capacity = p / last.active
    if capacity:
        needed = (i + lag / catch_up_seconds) / capacity
        if last.tasks:
            needed = min(needed, float(last.tasks))
        projected = catch_up(lag, capacity * replicas, i)
    else:
        needed, projected = float(replicas), catch_up(lag, p, i)
    return AppSignal(
        namespace=namespace,
        app=app,
        time=last.time,
        replicas=replicas,
        lag_records=lag,
        input_rate=i,
        processing_rate=p,
        seconds_to_catch_up=catch_up(lag, p, i),
        projected_seconds_to_catch_up=projected,
        replicas_needed=needed,
        active_members=last.active,
        capacity_per_member=capacity or 0.0,
    )
