"""What a person sees while the show runs.

:class:`LiveView` (a terminal) redraws the monitor's latest look twice a second with
rich: per pod its member role, readiness and active/standby/learning tasks; a
progress bar per copy being restored (restored offset of the changelog's end, with the
rate between two looks and the time left at that rate); the handovers as they happen;
the input lag and output rate; and what the operator says it waits for.
:class:`PlainView` (no terminal: ``--quick``, CI, a pipe) prints the same events as
lines. Both take the steps' messages through ``say``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Any

from rich.console import Group
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from segue.operator.status import progress
from segue.operator.status.build import counts, restores
from segue.stack.demo.monitor import Look, Monitor, Move
from segue.stack.demo.tally import OutputReader

MAX_RESTORES = 8  # rows of restore bars (the furthest behind), so the view fits a screen


def describe(move: Move) -> str:
    kind = "failover" if move.failover else "handover"
    new = f"{move.new} (its next instance)" if move.new == move.old else move.new
    return f"{kind} {move.task}: {move.old} -> {new}"


class Rates:
    """Records restored per second per (pod, task), between two looks (the same
    arithmetic as ``segue status``: ``segue.operator.status.progress``)."""

    def __init__(self) -> None:
        self._rates = progress.Rates()

    def update(self, look: Look) -> dict[tuple[str, str], float]:
        rates = {}
        for pod in look.pods:
            for task, offsets in (pod.report.restored if pod.report else {}).items():
                rate = self._rates.observe((pod.name, task), look.at, sum(offsets.values()))
                if rate is not None:
                    rates[(pod.name, task)] = rate
        return rates


class LiveView:
    def __init__(self, monitor: Monitor, output: OutputReader, started: float) -> None:
        self.monitor, self.output, self.started = monitor, output, started
        self.lines: deque[str] = deque(maxlen=6)
        self.rates = Rates()
        self._live = Live(refresh_per_second=2, transient=False, redirect_stdout=False)
        self._out: list[tuple[float, int]] = []

    def say(self, line: str) -> None:
        self.lines.append(f"{time.time() - self.started:6.1f}s  {line}")

    def __enter__(self) -> LiveView:
        self._live.__enter__()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="demo-view")
        self._stop = threading.Event()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self._live.__exit__(*exc)

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self._live.update(self.render())
            except Exception as exc:  # a look the view does not expect: say so, go on
                self._live.update(Text(f"the view failed to draw: {exc!r}"))

    def _output_rate(self) -> float:
        now, count = time.time(), self.output.count()
        self._out = [(t, c) for t, c in self._out if now - t < 5] + [(now, count)]
        (t0, c0) = self._out[0]
        return (count - c0) / (now - t0) if now > t0 else 0.0

    def render(self) -> Group:
        with self.monitor.lock:
            look, moves = self.monitor.look, list(self.monitor.moves[-5:])
        if look is None:
            return Group(Text("waiting for the first look ..."), *map(Text, self.lines))
        rates = self.rates.update(look)
        lag = "-" if look.lag is None else f"{look.lag:,}"
        signal = look.status.autoscaling
        needed = f"  needs {signal.replicas_needed:.1f} pods" if signal is not None else ""
        head = Text.assemble(
            (f"wordcount  replicas {look.replicas}  ", "bold"),
            f"phase {look.status.phase or '-'}  input lag {lag}"
            f"  output {self._output_rate():,.0f} records/s{needed}\n",
            ("operator: ", "dim"),
            look.waiting,
        )
        pods = Table("pod", "role", "ready", "active", "standby", "learning", expand=True)
        restoring = Table("restoring", "", "progress", "rate", "ETA", expand=True)
        rows: list[tuple[int, tuple[Any, ...]]] = []
        for pod in look.pods:
            tasks = counts(pod.report) if pod.report else {}
            pods.add_row(
                pod.name + (" (deleting)" if pod.deleting else ""),
                pod.role,
                "yes" if pod.ready else "no",
                *(str(tasks.get(r, 0)) for r in ("active", "standby", "learning")),
            )
            for copy in restores(pod.report) if pod.report else []:
                rate = rates.get((pod.name, copy.task), 0.0)
                left = progress.duration(progress.eta(copy.lag, rate)) if rate > 0 else "-"
                bar = ProgressBar(total=copy.end, completed=min(copy.restored, copy.end), width=30)
                row = (f"{pod.name} {copy.task}", copy.role, bar, f"{rate:,.0f}/s", left)
                rows.append((copy.lag, row))
        for _, row in sorted(rows, key=lambda r: -r[0])[:MAX_RESTORES]:  # furthest behind first
            restoring.add_row(*row)
        handovers = Text("\n".join(describe(m) for m in moves) or "none yet")
        return Group(
            Panel(head, title="Segue demo"),
            pods,
            restoring,
            Panel(handovers, title="handovers (latest)"),
            Panel(Text("\n".join(self.lines)), title="steps"),
        )


class PlainView:
    """Lines only: each step, each handover as the monitor sees it."""

    def __init__(self, monitor: Monitor, started: float) -> None:
        self.monitor, self.started = monitor, started
        self._seen = 0

    def say(self, line: str) -> None:
        self._moves()
        print(f"{time.time() - self.started:6.1f}s  {line}", flush=True)

    def _moves(self) -> None:
        with self.monitor.lock:
            moves = self.monitor.moves[self._seen :]
            self._seen += len(moves)
        for move in moves:
            print(f"{move.seen - self.started:6.1f}s    {describe(move)}", flush=True)

    def __enter__(self) -> PlainView:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="demo-lines")
        self._thread.start()
        return self

    def _loop(self) -> None:
        ticks = 0
        while not self._stop.wait(1.0):
            self._moves()
            ticks += 1
            if ticks % 10 == 0:
                self._status()

    def _status(self) -> None:
        """Every 10 s: pods by role, the input lag, what the operator waits for."""
        with self.monitor.lock:
            look = self.monitor.look
        if look is None:
            return
        roles = ", ".join(f"{p.name} {p.role}" for p in look.pods)
        print(
            f"{look.at - self.started:6.1f}s    [{roles}] lag {look.lag}; {look.waiting}",
            flush=True,
        )

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self._moves()


def is_terminal() -> bool:
    return sys.stdout.isatty()
