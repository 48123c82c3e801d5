"""Pure arithmetic of the fleet benchmark: percentiles and rates, kept apart so a fast
unit test (tests/bench/test_fleet_stats.py) pins them without a cluster."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest-rank method: the smallest value
    with at least ``q`` percent of the values at or below it. p99 of 100 samples is the
    99th smallest, so one slow sample in a hundred does not hide. NaN when empty."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is not within 0..100")
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def cpu_percent(ticks_before: int, ticks_after: int, seconds: float, hz: int) -> float:
    """CPU use of a process over a window, in percent of one core (100 = one core busy),
    from its user+system clock ticks (``/proc/PID/stat`` fields 14 and 15)."""
    if seconds <= 0:
        raise ValueError("the window must be longer than 0 s")
    return 100.0 * (ticks_after - ticks_before) / hz / seconds


def rate(count_before: float, count_after: float, seconds: float) -> float:
    """Events per second between two readings of a counter."""
    if seconds <= 0:
        raise ValueError("the window must be longer than 0 s")
    return (count_after - count_before) / seconds
