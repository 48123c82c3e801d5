"""Rates over a window of samples, with Prometheus' counter semantics.

Both rates are ``increase / span`` over the window (:mod:`.sample`), the increase
summed over consecutive pairs of samples like Prometheus' ``rate()`` (without its
extrapolation to the window's edges):

- a counter that went *down* between two samples was reset (a restarted pod's
  ``segue_task_records_processed`` starts again at 0; a recreated topic's log end
  too): the pair contributes the new value, never a negative throughput;
- a series missing from the earlier sample of a pair (a new member, a new partition)
  contributes nothing in that pair: its first value is a baseline, not work done in
  the window. This under-counts a new member's first interval, never over-counts.

``input_rate`` is the log-end offsets' increase (records written to the input);
``processing_rate`` the members' processed counters' increase.

``capacity`` is records per second per *active* member, measured only over pairs in
which the app was **behind** at both ends (more queued than was processed in that
interval, so every active member had work all along). Only then is processing
throughput the members' capacity; an app that keeps up processes as fast as input
arrives, which says nothing of how fast it could. Dividing by active members, not by
pods, is what keeps learners out of the estimate: a pod still restoring state has no
active task, adds nothing yet and is not counted as capacity that failed to help.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from segue.operator.autoscale.sample import Sample

K = TypeVar("K")


def counter_increase(before: int, after: int) -> int:
    """Prometheus' increase between two readings: a drop is a reset to 0, then ``after``."""
    return after - before if after >= before else after


def increase(before: Mapping[K, int], after: Mapping[K, int]) -> int:
    """Summed over the series present in both readings (see the module docstring)."""
    return sum(counter_increase(before[k], v) for k, v in after.items() if k in before)


@dataclass(frozen=True)
class Rates:
    input_rate: float  # records/s written to the input topics
    processing_rate: float  # records/s the members processed from them
    capacity: float | None  # records/s per active member while behind; None: not measured
    span: float  # seconds the window covers (0: a single sample, rates are 0)


def behind(lag_before: int, lag_after: int, processed: int) -> bool:
    """More was queued at both ends of an interval than the app processed in it."""
    return min(lag_before, lag_after) > processed


def rates(window: Sequence[Sample]) -> Rates:
    """The rates over ``window`` (oldest first, as :func:`.sample.remember` keeps it)."""
    if len(window) < 2 or window[-1].time <= window[0].time:
        return Rates(0.0, 0.0, None, 0.0)
    written = processed = 0
    busy_records, busy_member_seconds = 0, 0.0
    for a, b in itertools.pairwise(window):
        done = increase(a.processed, b.processed)
        written += increase(a.log_end, b.log_end)
        processed += done
        if behind(a.lag, b.lag, done) and b.active > 0:
            busy_records += done
            busy_member_seconds += b.active * (b.time - a.time)
    span = window[-1].time - window[0].time
    # Behind yet nothing processed (tasks stalled in a handover, failing, fenced) is no
    # measure of how fast members are: scaling cannot fix it, so it is "unknown".
    capacity = busy_records / busy_member_seconds if busy_records > 0 else None
    return Rates(written / span, processed / span, capacity, span)
