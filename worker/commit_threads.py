"""Active tasks' commits, each on a thread of its own: the threads' side.

``committing`` decides what to do with a commit; this module runs its Kafka part on a
daemon thread (:meth:`CommitThreads.start`), keeps the records fetched for the task
meanwhile (:meth:`CommitThreads.hold`), tells the loop which commits ended
(:meth:`CommitThreads.landed`) and which have a call past its bound
(:meth:`CommitThreads.stuck`), and abandons one to its call
(:meth:`CommitThreads.abandon`): its thread is left running and the watchdog
forgets it (``watchdog.Watchdog.forget``), so the process lives on.

Only the main loop calls a :class:`CommitThreads`; a thread only sets its own
:class:`Flight`'s outcome.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Message

from segue.worker.watchdog import WATCHDOG, Overrun, Watchdog


@dataclass
class Flight:
    """One commit in flight: its thread, its outcome, the task's records held."""

    task: str
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    held: list[Message] = field(default_factory=list)
    thread: threading.Thread | None = None


class CommitThreads:
    def __init__(self, watchdog: Watchdog = WATCHDOG) -> None:
        self.watchdog = watchdog
        self._flying: dict[str, Flight] = {}

    def __contains__(self, task: str) -> bool:
        return task in self._flying

    def start(self, task: str, send: Callable[[], None]) -> None:
        """Run ``send`` (the Kafka part of ``task``'s commit) on a thread of its own."""
        flight = Flight(task)

        def run() -> None:
            self.watchdog.spare(threading.get_ident())
            try:
                send()
            except BaseException as exc:  # the loop reads it: nothing escapes the thread
                flight.error = exc
            finally:
                flight.done.set()
                self.watchdog.remember(threading.get_ident())

        flight.thread = threading.Thread(target=run, name=f"segue-commit-{task}", daemon=True)
        self._flying[task] = flight
        flight.thread.start()

    def hold(self, task: str, msg: Message) -> bool:
        """Keep ``msg`` for ``task`` if its commit is in flight (it is processed once the
        commit ends); False: not committing, process it now."""
        flight = self._flying.get(task)
        if flight is None:
            return False
        flight.held.append(msg)
        return True

    def landed(self) -> list[Flight]:
        """The commits whose thread is done, taken out of flight."""
        done = [f for f in self._flying.values() if f.done.is_set()]
        for flight in done:
            del self._flying[flight.task]
        return done

    def stuck(self) -> list[tuple[Flight, Overrun]]:
        """The commits in flight with a call past its bound."""
        out = []
        for flight in self._flying.values():
            overrun = self._overrun(flight)
            if overrun is not None and not flight.done.is_set():
                out.append((flight, overrun))
        return out

    def overrun(self, task: str) -> Overrun | None:
        """The call of ``task``'s commit in flight past its bound, if one is."""
        flight = self._flying.get(task)
        return None if flight is None else self._overrun(flight)

    def _overrun(self, flight: Flight) -> Overrun | None:
        ident = flight.thread.ident if flight.thread is not None else None
        return None if ident is None else self.watchdog.stuck(ident)

    def wait(self, task: str, timeout: float) -> Flight | None:
        """Wait for ``task``'s commit in flight, until it ends (the flight, taken out),
        a call of it overruns its bound, or ``timeout`` s pass (None then, or if none
        is in flight)."""
        flight = self._flying.get(task)
        deadline = time.monotonic() + timeout
        while flight is not None and not flight.done.wait(0.05):
            if time.monotonic() >= deadline or self._overrun(flight) is not None:
                return None
        return None if flight is None else self._flying.pop(task)

    def abandon(self, task: str) -> Flight | None:
        """Give up on ``task``'s commit in flight: its thread's calls no longer count as
        stuck (the process lives on); the caller fences its producer."""
        flight = self._flying.pop(task, None)
        if flight is not None and flight.thread is not None and flight.thread.ident is not None:
            self.watchdog.forget(flight.thread.ident)
            if flight.done.is_set():  # it ended meanwhile: its ident may be reused
                self.watchdog.remember(flight.thread.ident)
        return flight
