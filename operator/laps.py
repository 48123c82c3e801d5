"""How long each part of one reconcile step took.

A Kafka Streams group waits in its rebalance, every task paused under exactly-once, from
its leader's report to the operator's answer; :mod:`.reconcile` says in the answer's log
line where that step's time went (reading pages, the API server, Kafka; deciding;
acting), so a slow answer names its slow part. Laps are monotonic-clock differences: a
step's own timing, never the decision core's input.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Laps:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = self._last = clock()
        self.parts: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        """The time since the last lap (or the start) was spent on ``name``."""
        now = self._clock()
        self.parts.append((name, now - self._last))
        self._last = now

    @property
    def total(self) -> float:
        """Seconds from the start to the last lap."""
        return self._last - self._start

    def __str__(self) -> str:
        return ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.parts)
