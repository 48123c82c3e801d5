"""Where reconcile steps run: a bounded set of threads, urgent steps first.

``handlers`` gives each StreamApp an async loop (no thread of its own) that hands its
steps to one :class:`StepPool`. A step is *urgent* when a watch event woke it (a
``kubectl scale``, an HPA, a pod that changed) or its app has something in flight; a
*routine* step is a settled app's periodic look. Urgent steps are taken first;
routine ones may hold at most half the threads and start at a bounded rate, so however
many settled apps there are, a scale is looked at as soon as a thread is free rather
than after every other app's turn, and on a CPU the settled fleet has not taken. Routine
looks that queue up only space out: each app's loop waits for its step before it
sleeps, so the settled apps' looks slow down as the fleet grows instead of piling up
(docs/benchmarks.md, "One operator for a fleet", has the measurements;
controller-runtime's work queue and rate limiter are the model).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")

_Job = tuple[Callable[[], object], "Future[object]"]


class StepPool:
    """``workers`` threads, started at once; ``routine`` of them at most run routine steps,
    and those start at ``routine_rate`` a second at most (a token bucket, as
    controller-runtime's rate limiter): settled apps' looks cost the operator and the API
    server the same CPU however many apps there are, and each app is looked at less
    often as the fleet grows (every ``apps / routine_rate`` seconds, never more often
    than its own loop asks)."""

    def __init__(
        self, workers: int, routine_rate: float = math.inf, name: str = "segue-step"
    ) -> None:
        self.workers = workers
        self.routine = max(1, workers // 2)
        self.routine_rate = routine_rate  # routine steps started per second, at most
        self._tokens = min(routine_rate, float(workers))  # a token bucket; full: the rate
        self._stamp = time.monotonic()
        self._urgent: deque[_Job] = deque()
        self._routine: deque[_Job] = deque()
        self._running_routine = 0
        self._closed = False
        self._ready = threading.Condition()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, step: Callable[[], T], urgent: bool) -> Future[T]:
        future: Future[T] = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("the step pool is closed")
            (self._urgent if urgent else self._routine).append((step, future))  # type: ignore[arg-type]
            self._ready.notify()
        return future

    def promote(self, future: Future[T]) -> bool:
        """Make a queued routine step urgent (its app was woken meanwhile); False if it
        already started (or is not queued)."""
        with self._ready:
            for job in self._routine:
                if job[1] is future:
                    self._routine.remove(job)
                    self._urgent.append(job)
                    self._ready.notify()
                    return True
        return False

    def queued(self) -> tuple[int, int]:
        """Steps waiting for a thread: (urgent, routine)."""
        with self._ready:
            return len(self._urgent), len(self._routine)

    def close(self) -> None:
        """Run no more steps (queued ones are cancelled); running ones finish."""
        with self._ready:
            self._closed = True
            for _, future in (*self._urgent, *self._routine):
                future.cancel()
            self._urgent.clear()
            self._routine.clear()
            self._ready.notify_all()

    def _refill(self) -> float:
        """Tokens now (under the lock); the seconds until the next one if none."""
        if self.routine_rate == math.inf:
            return 0.0
        now = time.monotonic()
        burst = max(1.0, self.routine_rate)
        self._tokens = min(burst, self._tokens + (now - self._stamp) * self.routine_rate)
        self._stamp = now
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.routine_rate

    def _take(self) -> tuple[_Job, bool] | None:
        with self._ready:
            while True:
                if self._closed:
                    return None
                if self._urgent:
                    return self._urgent.popleft(), False
                wait: float | None = None
                if self._routine and self._running_routine < self.routine:
                    wait = self._refill()
                    if not wait:
                        self._tokens -= 1
                        self._running_routine += 1
                        return self._routine.popleft(), True
                self._ready.wait(wait)

    def _work(self) -> None:
        while (taken := self._take()) is not None:
            (step, future), routine = taken
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(step())
                    except BaseException as exc:  # the loop that submitted it decides
                        future.set_exception(exc)
            finally:
                if routine:
                    with self._ready:
                        self._running_routine -= 1
                        self._ready.notify()
