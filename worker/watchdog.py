"""Notice a blocking Kafka call that runs past its bound.

Every blocking confluent-kafka call the worker makes passes an explicit timeout,
and runs inside :meth:`Watchdog.call`, which records its name and start. A call
may still hang well past its timeout (seen: ``send_offsets_to_transaction``
after a 5-second broker restart, librdkafka 2.16), and the main loop, the only
thread that does Kafka work, then processes nothing while the pod looks well.
So the watchdog keeps the calls in flight where another thread can see them:

- ``/healthz`` and ``/readyz`` (``http``) answer 503 naming the stuck call and
  for how long, so a liveness probe restarts the pod and it stops looking ready;
- ``segue_kafka_call_overruns_total{call}`` counts each call that overran, once;
- :func:`monitor` exits the process once a call is stuck ``exit_after`` seconds
  past its bound, without waiting for a probe.

Exiting is the exactly-once choice: the hung client cannot be unwound from
another thread, and a dead process owns nothing. Its open transaction is aborted
by the broker (``transaction.timeout.ms``) or fenced by the next
``init_transactions`` of the same transactional id; its input offsets were only
ever committed inside transactions, so nothing is lost or counted twice.

A call's bound is its own timeout plus ``grace`` (the call's, else the watchdog's),
capped by ``ceiling`` (the
worker's ``kafka_call_bound``): the longest any call may hold the loop. Pure
apart from the clock, which is injected; one instance per process (``WATCHDOG``),
because which call is blocking is a fact about the process, like its metrics.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

GRACE = 5.0  # seconds a call may run past its own timeout (unless the call says less)
# Seconds a call may stay stuck past its bound before the worker exits: sooner than
# the liveness probe (2 s x 6 failures, operator/act/objects.py) would restart it, and
# soon enough that a task owner left hanging by librdkafka after a broker restart
# processes again within 15 s of the broker serving (docs/reliability.md).
EXIT_AFTER = 2.0
EXIT_STUCK = 75  # the exit code then (EX_TEMPFAIL: a restart helps)


@dataclass(frozen=True)
class Overrun:
    """A call that ran (or still runs) past its bound."""

    call: str
    elapsed: float
    bound: float

    def describe(self) -> str:
        return f"Kafka call {self.call} blocked for {self.elapsed:.1f}s (bound {self.bound:.1f}s)"


@dataclass
class _InFlight:
    call: str
    started: float
    bound: float
    counted: bool = False


class Watchdog:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        grace: float = GRACE,
        ceiling: float | None = None,
    ) -> None:
        self.clock = clock
        self.grace = grace
        self.ceiling = ceiling
        self._lock = threading.Lock()
        self._calls: dict[int, _InFlight] = {}
        self._next = 0
        self.overruns: Counter[str] = Counter()  # call -> calls that overran

    def configure(self, grace: float, ceiling: float | None) -> None:
        self.grace, self.ceiling = grace, ceiling

    def bound(self, timeout: float, grace: float | None = None) -> float:
        """``timeout`` plus ``grace`` (the watchdog's own if None), capped by the ceiling."""
        bound = timeout + (self.grace if grace is None else grace)
        return bound if self.ceiling is None else min(bound, self.ceiling)

    @contextlib.contextmanager
    def call(self, name: str, timeout: float, grace: float | None = None) -> Iterator[None]:
        """Run the body as the blocking call ``name``, which was given ``timeout``;
        ``grace``: how long past it the call may run (the watchdog's own if None)."""
        with self._lock:
            token, self._next = self._next, self._next + 1
            self._calls[token] = _InFlight(name, self.clock(), self.bound(timeout, grace))
        try:
            yield
        finally:
            with self._lock:
                call = self._calls.pop(token)
                elapsed = self.clock() - call.started
                late = elapsed > call.bound
                if late and not call.counted:
                    self.overruns[call.call] += 1
            if late:
                log.warning(
                    "%s; it has returned", Overrun(call.call, elapsed, call.bound).describe()
                )

    def stuck(self) -> Overrun | None:
        """The call in flight furthest past its bound, if any is; counts new overruns."""
        now = self.clock()
        worst: Overrun | None = None
        with self._lock:
            for call in self._calls.values():
                elapsed = now - call.started
                if elapsed <= call.bound:
                    continue
                if not call.counted:
                    call.counted = True
                    self.overruns[call.call] += 1
                if worst is None or elapsed - call.bound > worst.elapsed - worst.bound:
                    worst = Overrun(call.call, elapsed, call.bound)
        return worst


def must_exit(overrun: Overrun | None, exit_after: float) -> bool:
    return overrun is not None and overrun.elapsed - overrun.bound >= exit_after


def monitor(
    watchdog: Watchdog,
    exit_after: float = EXIT_AFTER,
    every: float = 0.5,
    exit: Callable[[int], object] = os._exit,
) -> threading.Thread:
    """Start a daemon thread that checks ``watchdog`` every ``every`` seconds, logs
    each stuck call once, and ends the process once one is ``exit_after`` past its bound."""

    def loop() -> None:
        reported: str | None = None
        while True:
            overrun = watchdog.stuck()
            if overrun is not None and overrun.call != reported:
                log.error("%s: reporting unhealthy", overrun.describe())
            reported = overrun.call if overrun is not None else None
            if must_exit(overrun, exit_after):
                log.critical("%s: exiting so the pod restarts", overrun and overrun.describe())
                logging.shutdown()
                exit(EXIT_STUCK)
                return
            time.sleep(every)

    thread = threading.Thread(target=loop, name="segue-watchdog", daemon=True)
    thread.start()
    return thread


WATCHDOG = Watchdog()


def bounded(
    name: str, timeout: float, grace: float | None = None
) -> contextlib.AbstractContextManager[None]:
    """``with bounded("flush", t): producer.flush(t)``: the process's watchdog watches it."""
    return WATCHDOG.call(name, timeout, grace)
