"""A progress bar for the simulations, drawn by a driver thread polling a counter.

Spark reports a task's accumulator updates to the driver when the task ends, so the
counter (units replayed) moves as executors finish units; a thread reads it twice a
second. On a terminal that is a rich progress bar on stderr; elsewhere (CI, a log file)
it is one plain line per 10% and one at the end, never a redraw per poll.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

POLL = 0.5
STEP = 0.1  # a plain line per this fraction done


@contextmanager
def watching(
    total: int, read: Callable[[], int], stream: TextIO | None = None, label: str = "simulating"
) -> Iterator[None]:
    """Show ``read()`` of ``total`` while the body runs."""
    out = stream or sys.stderr
    stop = threading.Event()
    draw = (
        _bar(total, read, out, label, stop)
        if out.isatty()
        else _lines(total, read, out, label, stop)
    )
    thread = threading.Thread(target=draw, name="segue-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _bar(
    total: int, read: Callable[[], int], out: TextIO, label: str, stop: threading.Event
) -> Callable[[], None]:
    def draw() -> None:
        columns = (
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=Console(file=out), transient=False) as bar:
            task = bar.add_task(label, total=total)
            while not stop.wait(POLL):
                bar.update(task, completed=read())
            bar.update(task, completed=read())

    return draw


def _lines(
    total: int, read: Callable[[], int], out: TextIO, label: str, stop: threading.Event
) -> Callable[[], None]:
    def draw() -> None:
        start, shown, printed = time.monotonic(), -1, -1
        while True:
            stopped = stop.wait(POLL)
            done = read()
            step = int(done / total / STEP) if total else 10
            if step > shown or (stopped and done != printed):
                shown, printed = step, done
                print(f"{label}: {done}/{total} ({time.monotonic() - start:.0f} s)", file=out)
                out.flush()
            if stopped:
                return

    return draw
