"""CPU per pod (and the machine), sampled while a scale runs, to read beside a handover.

Every :data:`PERIOD` seconds a thread adds up the CPU time of each watched process
group (a pod's container runs in its own session, as do the broker and the operator)
from ``/proc/<pid>/stat``, and the machine's busy time from ``/proc/stat``.
:meth:`Usage.cores` turns two samples into cores used between them: 2.0 is the whole
of this 2-core machine.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections.abc import Callable, Mapping

PERIOD = 0.2
TICK = os.sysconf("SC_CLK_TCK")
MACHINE = "machine"


def _groups() -> tuple[dict[int, float], dict[int, float]]:
    """CPU seconds (all threads) by process group, and by process that leads none."""
    out: dict[int, float] = {}
    alone: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pgrp, seconds = int(fields[2]), (int(fields[11]) + int(fields[12])) / TICK
        out[pgrp] = out.get(pgrp, 0.0) + seconds
        if pgrp != int(entry.name):
            alone[int(entry.name)] = seconds
    return out, alone


def _machine() -> float:
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / TICK


class Usage(threading.Thread):
    """Samples of ``watched()`` (name -> pid: its process group if it leads one, else
    the process alone) and the machine."""

    def __init__(self, watched: Callable[[], Mapping[str, int]]) -> None:
        super().__init__(daemon=True)
        self.watched = watched
        self.samples: dict[str, list[tuple[float, float]]] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(PERIOD):
            try:
                names = dict(self.watched())
            except Exception:  # the API server is busy: sample the machine only
                names = {}
            now, (groups, alone) = time.time(), _groups()
            self.samples.setdefault(MACHINE, []).append((now, _machine()))
            for name, pid in names.items():
                seconds = alone.get(pid, groups.get(pid))
                if seconds is not None:
                    self.samples.setdefault(name, []).append((now, seconds))

    def cores(self, start: float, end: float) -> dict[str, float]:
        """Cores each name used from ``start`` to ``end`` (samples around them)."""
        out: dict[str, float] = {}
        for name, series in self.samples.items():
            times = [t for t, _ in series]
            i = max(0, bisect.bisect_right(times, start) - 1)
            j = min(len(series) - 1, bisect.bisect_left(times, end))
            if j > i and series[j][0] > series[i][0]:
                out[name] = (series[j][1] - series[i][1]) / (series[j][0] - series[i][0])
        return out

    def stop(self) -> None:
        self.stopped.set()
        self.join(5)
