"""The latest :class:`AppSignal` of every app, shared between the reconcile threads that
write it and the servers that read it (Prometheus metrics, the external metrics API)."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class AppSignal:
    """One app's backlog at one observation. Rates in records/s; seconds may be ``inf``
    (falling behind, or not processing at all): consumers that cannot carry ``inf``
    (the external metrics API) must clamp it. ``time`` says how fresh it is: when Kafka
    cannot be read the last signal stays, and ``time`` stops moving."""

    namespace: str
    app: str
    time: float  # when observed (seconds since the epoch)
    replicas: int  # spec.replicas: what the app is scaling to
    lag_records: int  # sum over source partitions of log end minus committed offset
    input_rate: float
    processing_rate: float
    seconds_to_catch_up: float  # lag / (processing - input) at today's capacity
    projected_seconds_to_catch_up: float  # the same once pending handovers land
    # Added with the signal's maths (segue.operator.autoscale.signal); defaulted so a
    # signal built by hand (a test) needs none of them.
    replicas_needed: float = 0.0  # members to keep up and catch up: the HPA's target
    active_members: int = 0  # members running an input task as active now
    capacity_per_member: float = 0.0  # records/s one active member processes; 0: unknown
    # Why these values cannot be trusted now (Kafka cannot be read): the external metrics
    # API answers an error instead, so no HPA scales on a backlog nobody could read.
    unknown: str = ""

    @property
    def lag_per_replica(self) -> float:
        return self.lag_records / self.replicas if self.replicas else math.inf


class SignalBoard:
    """Thread-safe: written by one reconcile thread per app, read by any server thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._signals: dict[tuple[str, str], AppSignal] = {}

    def put(self, signal: AppSignal) -> None:
        with self._lock:
            self._signals[(signal.namespace, signal.app)] = signal

    def mark_unknown(self, namespace: str, app: str, why: str) -> None:
        """The app's input cannot be read now: its last signal stays (the status and the
        gauges show when it was observed) but is no longer served as a value. The next
        :meth:`put` makes it known again."""
        with self._lock:
            last = self._signals.get((namespace, app))
            if last is not None:
                self._signals[(namespace, app)] = replace(last, unknown=why)

    def get(self, namespace: str, app: str) -> AppSignal | None:
        with self._lock:
            return self._signals.get((namespace, app))

    def remove(self, namespace: str, app: str) -> None:
        with self._lock:
            self._signals.pop((namespace, app), None)

    def all(self) -> list[AppSignal]:
        with self._lock:
            return list(self._signals.values())
