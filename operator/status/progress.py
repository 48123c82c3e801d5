"""How fast a copy of a task catches up, and when it will be done, from two reads.

One read of a worker's ``/metrics`` (or of the StreamApp's status) is a position, not a
speed: a rate needs two reads some time apart. :class:`Rates` keeps each copy's last
reading and answers the records per second between it and the new one; ``segue status
--watch`` reads between refreshes, a one-shot ``segue status`` twice about a second
apart, the demo's live view twice a second. The ETA is the lag left at that rate.
"""

from __future__ import annotations

from collections.abc import Hashable


class Rates:
    """Per key (say ``(pod, task)``), units per second between its last two readings of
    a number that only grows while it progresses (restored records, or minus its lag)."""

    def __init__(self) -> None:
        self._last: dict[Hashable, tuple[float, int]] = {}

    def observe(self, key: Hashable, at: float, value: int) -> float | None:
        """Record ``value`` at time ``at`` (seconds); the rate since the key's previous
        reading, never below 0, or None when this is its first reading (or no time
        passed)."""
        before = self._last.get(key)
        self._last[key] = (at, value)
        if before is None or at <= before[0]:
            return None
        return max(0.0, (value - before[1]) / (at - before[0]))


def eta(lag: int, rate: float | None) -> float | None:
    """Seconds until ``lag`` records are done at ``rate`` per second: 0 when nothing is
    left, None when the rate is unknown or zero (no progress: no promise)."""
    if lag <= 0:
        return 0.0
    if rate is None or rate <= 0:
        return None
    return lag / rate


def duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``1h02m``; ``-`` for unknown."""
    if seconds is None:
        return "-"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
