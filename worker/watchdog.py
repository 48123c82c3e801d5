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

Exiting is the exactly-once choice for a call on the main loop: the hung client
cannot be unwound from another thread, and a dead process owns nothing. Its open
transaction is aborted by the broker (``transaction.timeout.ms``) or fenced by the
next ``init_transactions`` of the same transactional id; its input offsets were
only ever committed inside transactions, so nothing is lost or counted twice.

A task's commit runs on a thread of its own (``committing``), spared
(:meth:`Watchdog.spare`): its stuck call fails the probes but never ends the
process, since the loop abandons that thread (:meth:`Watchdog.forget`) and fences
its producer with a new one instead, even when the loop is busy a while first. A
forgotten thread's calls, the one stuck and any it makes later, no longer count.

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
# Seconds a call may stay stuck past its bound before the worker exits: well before
# the liveness probe (segue.protocol.probes, 40 s) would restart it, and
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
    thread: int  # threading.get_ident() of the caller
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
        self._forgotten: set[int] = set()  # threads whose calls no longer count
        self._spared: set[int] = set()  # threads the loop abandons: never an exit
        self._next = 0
        self.overruns: Counter[str] = Counter()  # call -> calls that overran
        self.abandoned: Counter[str] = Counter()  # call -> calls left to a forgotten thread

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
        thread = threading.get_ident()
        with self._lock:
            token, self._next = self._next, self._next + 1
            if thread not in self._forgotten:
                bound = self.bound(timeout, grace)
                self._calls[token] = _InFlight(name, self.clock(), bound, thread)
        try:
            yield
        finally:
            self._returned(token)

    def _returned(self, token: int) -> None:
        with self._lock:
            call = self._calls.pop(token, None)  # None: its thread was forgotten
            if call is None:
                return
            elapsed = self.clock() - call.started
            late = elapsed > call.bound
            if late and not call.counted:
                self.overruns[call.call] += 1
        if late:
            log.warning("%s; it has returned", Overrun(call.call, elapsed, call.bound).describe())

    def stuck(self, thread: int | None = None, sparing: bool = False) -> Overrun | None:
        """The call in flight furthest past its bound, if any is (of ``thread`` only, if
        given; ``sparing``: not of a spared thread); counts new overruns."""
        now = self.clock()
        worst: Overrun | None = None
        with self._lock:
            for call in self._calls.values():
                if thread is not None and call.thread != thread:
                    continue
                if sparing and call.thread in self._spared:
                    continue
                elapsed = now - call.started
                if elapsed <= call.bound:
                    continue
                if not call.counted:
                    call.counted = True
                    self.overruns[call.call] += 1
                if worst is None or elapsed - call.bound > worst.elapsed - worst.bound:
                    worst = Overrun(call.call, elapsed, call.bound)
        return worst

    def forget(self, thread: int) -> None:
        """``thread`` was abandoned to a hung call: its calls no longer count, until
        :meth:`remember` (it ended, so its ident may be reused)."""
        with self._lock:
            self._forgotten.add(thread)
            for token in [t for t, c in self._calls.items() if c.thread == thread]:
                self.abandoned[self._calls.pop(token).call] += 1

    def spare(self, thread: int) -> None:
        """Calls of ``thread`` never end the process: whoever runs it abandons it when
        stuck (a task's commit: ``commit_threads``), even if the loop that does so is
        itself busy a while; they still make the probes fail while stuck."""
        with self._lock:
            self._spared.add(thread)

    def remember(self, thread: int) -> None:
        """``thread`` ended: its ident may be reused by a thread like any other."""
        with self._lock:
            self._forgotten.discard(thread)
            self._spared.discard(thread)


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
            fatal = watchdog.stuck(sparing=True)
            if must_exit(fatal, exit_after):
                log.critical("%s: exiting so the pod restarts", fatal and fatal.describe())
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
