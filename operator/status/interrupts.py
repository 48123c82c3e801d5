"""Ctrl-C for ``segue status --watch``: the watch stops between reads, never inside one.

A ``KeyboardInterrupt`` raised wherever the main thread happens to be can land inside a
read: in the thread pool that reads the pods' metrics, or in the HTTP client's connection
pool between a lock's acquire and the block that releases it (CPython's with-statement
window, bpo-29988), and the process can then wait at exit for a lock nobody releases. So the
first Ctrl-C only asks the loop to stop: a read in flight finishes (each of its calls is
bounded), nothing more is printed, the command exits 130. A Ctrl-C during the pause
between reads, when nothing is in flight, or a second one, interrupts at once.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

INTERRUPTED = 130  # a shell's exit status for a command stopped by SIGINT


class Interrupts:
    """SIGINT's handler for the loop's lifetime: ``asked`` once a Ctrl-C came."""

    def __init__(self) -> None:
        self.asked = False
        self._pausing = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self._pausing or self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def pause(self, seconds: float) -> None:
        """Sleep, interruptible at once: nothing is in flight."""
        self._pausing = True
        try:
            if not self.asked:
                time.sleep(seconds)
        finally:
            self._pausing = False


def watch(once: Callable[[], str], interval: float, write: Callable[[str], None]) -> int:
    """``write(once())`` every ``interval`` seconds until Ctrl-C; the exit status."""
    stop = Interrupts()
    previous = signal.signal(signal.SIGINT, stop.handle)
    try:
        while not stop.asked:
            began = time.monotonic()
            text = once()
            if stop.asked:  # asked during the read: its screen is not printed
                break
            write(text)
            stop.pause(max(0.0, interval - (time.monotonic() - began)))
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, previous)
    return INTERRUPTED


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
