"""The autoscaling signal in the StreamApp's status (``status.autoscaling``), both ways.

The leader computes an :class:`~segue.operator.autoscale.AppSignal` every step; it writes
it to the status only when it is ``REFRESH`` seconds old there or the number of pods it
asks for changed, so a busy app does not become a stream of status writes. Every
operator replica's external metrics API, a standby's too, can then answer from the
status (:func:`from_status`): the HPA gets a value whichever replica its connection
reached. ``inf`` ("never catches up") is written as an absent field.
"""

from __future__ import annotations

import math
from typing import Any

from segue.operator.api.status import AutoscalingStatus, from_timestamp, to_timestamp
from segue.operator.autoscale import AppSignal

REFRESH = 10.0  # seconds: the oldest a signal in the status gets while the app runs


def _finite(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else round(value, 3)


def to_status(signal: AppSignal) -> AutoscalingStatus:
    return AutoscalingStatus(
        observed_at=to_timestamp(signal.time),
        replicas_needed=round(signal.replicas_needed, 3),
        lag_records=signal.lag_records,
        input_records_per_second=round(signal.input_rate, 3),
        processed_records_per_second=round(signal.processing_rate, 3),
        seconds_to_catch_up=_finite(signal.seconds_to_catch_up),
        projected_seconds_to_catch_up=_finite(signal.projected_seconds_to_catch_up),
        unknown=signal.unknown or None,
    )


def due(previous: AutoscalingStatus | None, signal: AppSignal) -> bool:
    """Write ``signal`` now? When none is there, it is ``REFRESH`` old, the pods it asks
    for (rounded up, as the HPA rounds) changed, or whether it is known (so a standby
    refuses it as the leader does)."""
    if previous is None:
        return True
    if (signal.unknown or None) != previous.unknown:
        return True
    if signal.time - from_timestamp(previous.observed_at) >= REFRESH:
        return True
    return math.ceil(signal.replicas_needed) != math.ceil(previous.replicas_needed)


def from_status(namespace: str, app: str, replicas: int, status: Any) -> AppSignal | None:
    """The signal a StreamApp's status holds (None if it holds none)."""
    if status is None:
        return None
    inf = math.inf
    s = AutoscalingStatus.model_validate(status)
    return AppSignal(
        namespace=namespace,
        app=app,
        time=from_timestamp(s.observed_at),
        replicas=replicas,
        lag_records=s.lag_records,
        input_rate=s.input_records_per_second,
        processing_rate=s.processed_records_per_second,
        seconds_to_catch_up=inf if s.seconds_to_catch_up is None else s.seconds_to_catch_up,
        projected_seconds_to_catch_up=inf
        if s.projected_seconds_to_catch_up is None
        else s.projected_seconds_to_catch_up,
        replicas_needed=s.replicas_needed,
        unknown=s.unknown or "",
    )
