"""Close a task's producer off the main loop.

``Producer.close()`` takes no timeout, and after a fence or a broker restart it
can block for its whole ``CLOSE_TIMEOUT`` (seen: 30 s on a producer fenced
mid-transaction, while librdkafka tried to abort what the broker had already
ended). Run on the main loop, that stalls every other task of the worker: none
commits, and the watchdog ends the process. By the time a producer is closed,
its task no longer uses it: the transaction is committed, or left to abort here
first (``active.ActiveTask.abort``), or the producer is fenced or abandoned, so
it can write nothing a reader would see. Closing it on a thread of its own is
therefore safe, and the loop moves on at once.

``active`` hands its producers here; ``runtime`` waits for the closes still in
flight when the worker stops (``drain``), bounded by the shutdown deadline, but
not for a producer abandoned in a hung call (``committing``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

_lock = threading.Lock()
_closing: set[threading.Thread] = set()


def close_later(
    what: str, close: Callable[[], object], slow_after: float, drained: bool = True
) -> threading.Thread:
    """Run ``close`` on a daemon thread; log if it takes longer than ``slow_after``.
    ``drained``: :func:`drain` waits for it (not for a producer hung in a call)."""

    def run() -> None:
        began = time.monotonic()
        try:
            close()
        except Exception as exc:  # a fenced or failed producer still closes
            log.debug("%s: closing its producer: %s", what, exc)
        took = time.monotonic() - began
        if took > slow_after:
            log.warning("%s: closing its producer took %.1fs (off the main loop)", what, took)
        with _lock:
            _closing.discard(threading.current_thread())

    thread = threading.Thread(target=run, name=f"segue-close-{what}", daemon=True)
    if drained:
        with _lock:
            _closing.add(thread)
    thread.start()
    return thread


def in_flight() -> int:
    with _lock:
        return len(_closing)


def drain(deadline: float) -> int:
    """Wait until the closes in flight end or ``deadline`` (monotonic) passes;
    returns how many are still running then."""
    with _lock:
        threads = list(_closing)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return in_flight()
