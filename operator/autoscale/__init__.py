"""The autoscaling signal: how far behind each StreamApp is, and how soon it catches up.

Pure like :mod:`segue.operator.scaling` (no I/O, no clock: time is an input). The
reconcile step computes one :class:`AppSignal` per app from what it observed and puts
it on the :class:`SignalBoard`; the operator's Prometheus metrics and its
``external.metrics.k8s.io`` provider (what an HPA reads) both read the board, so the
two can never disagree. docs/autoscaling.md writes the maths down.
"""

from segue.operator.autoscale.board import AppSignal, SignalBoard
from segue.operator.autoscale.rates import Rates, counter_increase, rates
from segue.operator.autoscale.sample import WINDOW_SECONDS, Sample, Window, remember
from segue.operator.autoscale.signal import CATCH_UP_SECONDS, catch_up, compute

__all__ = [
    "CATCH_UP_SECONDS",
    "WINDOW_SECONDS",
    "AppSignal",
    "Rates",
    "Sample",
    "SignalBoard",
    "Window",
    "catch_up",
    "compute",
    "counter_increase",
    "rates",
    "remember",
]
