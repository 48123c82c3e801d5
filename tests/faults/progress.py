"""Whether an app's tasks commit: its consumer group's committed input offsets over
time. The fault suite's measure of "processing resumed" (issue 14): every task
committing steadily again, and the longest any task stood still. Used by
``harness``; knows nothing of faults or Kubernetes, only the app's group and topics.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.operator.e2e import ROOT
from tests.operator.test_e2e_scaling import PARTITIONS

STEADY_GAP = 3.0  # seconds: a task committing nothing for this long has stalled
SILENT = 6.0  # seconds without a sample after which the reader process is replaced


def _pump(reader: subprocess.Popen[bytes], lines: queue.Queue[str]) -> None:
    assert reader.stdout is not None
    for line in reader.stdout:
        lines.put(line.decode())


class Progress(threading.Thread):
    """The app's committed input offsets (its consumer group, every partition of
    every sub-topology's source: one per task), sampled every ``interval`` s.

    A task has resumed after a moment once it commits steadily again: from some
    advance of its committed offset on, no gap of ``STEADY_GAP`` s, up to now. One
    advance alone is not enough: the coordinator completing a transaction that was
    committing when the broker went away moves the offset once, while the task's
    owner may still hang. Samples fail while the broker is away; those moments
    simply have no sample. ``dump`` writes them out for diagnosis."""

    def __init__(
        self, bootstrap: str, group: str, topics: list[str], interval: float = 0.25
    ) -> None:
        super().__init__(daemon=True)
        self.partitions = [f"{t}:{p}" for t in topics for p in range(PARTITIONS)]
        self.command = [
            sys.executable, "-m", "tests.faults.offsets_reader", bootstrap, group,
            str(PARTITIONS), *topics,
        ]  # fmt: skip
        self.samples: list[tuple[float, dict[str, int]]] = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.restarts = 0  # readers killed for going silent (or that died)
        # when ``all_moving`` first held: stalls are measured from then on, not from the
        # app's first commits after the watch began (its start is not a stall)
        self.moving_since: float | None = None

    def run(self) -> None:
        # A reader process (``offsets_reader``): librdkafka hung or crashed in this
        # read across a broker restart; a silent or dead reader is replaced.
        while not self.stopped.is_set():
            reader = subprocess.Popen(
                self.command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
            )
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=_pump, args=(reader, lines), daemon=True).start()
            try:
                while not self.stopped.is_set():
                    line = lines.get(timeout=SILENT)
                    t, sample = json.loads(line)
                    with self.lock:
                        self.samples.append((float(t), dict(sample)))
            except queue.Empty:
                self.restarts += 1
            finally:
                reader.kill()
                reader.wait(10)

    def stop(self) -> None:
        self.stopped.set()
        self.join(10)

    def dump(self, path: Path) -> None:
        with self.lock:
            path.write_text("".join(json.dumps([t, s]) + "\n" for t, s in self.samples))

    def advances(self) -> dict[str, list[float]]:
        """Per partition, the sample times at which its committed offset grew."""
        with self.lock:
            samples = list(self.samples)
        out: dict[str, list[float]] = {p: [] for p in self.partitions}
        last: dict[str, int] = {}
        for t, sample in samples:
            for p, offset in sample.items():
                if p in last and offset > last[p]:
                    out.setdefault(p, []).append(t)
                last[p] = offset
        return out

    def resumed(self, since: float, now: float) -> dict[str, float | None]:
        """Per partition, when it resumed steady commits after ``since`` (None: not)."""
        out: dict[str, float | None] = {}
        for p, times in self.advances().items():
            after = [t for t in times if t > since]
            if not after or now - after[-1] >= STEADY_GAP:
                out[p] = None
                continue
            start = after[0]
            for before, t in itertools.pairwise(after):
                if t - before >= STEADY_GAP:
                    start = t
            out[p] = start
        return out

    def all_moving(self) -> bool:
        """Every task has been committing steadily for the last ``STEADY_GAP`` s."""
        now = time.monotonic()
        moving = all(
            t is not None and now - t >= STEADY_GAP
            for t in self.resumed(now - 4 * STEADY_GAP, now).values()
        )
        if moving and self.moving_since is None:
            self.moving_since = now
        return moving

    def wait_resumed(self, since: float, bound: float, why: Any) -> float:
        """Seconds from ``since`` until every task commits steadily again; fails if
        that is more than ``bound`` (waits ``STEADY_GAP`` past it to be sure)."""
        while True:
            now = time.monotonic()
            resumed = self.resumed(since, now)
            times = [t for t in resumed.values() if t is not None]
            if len(times) == len(resumed) and now - max(times) >= STEADY_GAP:
                took = max(times) - since
                assert took <= bound, self._late(since, bound, resumed, why)
                return took
            if now > since + bound + STEADY_GAP:
                raise AssertionError(self._late(since, bound, resumed, why))
            time.sleep(0.25)

    @staticmethod
    def _late(since: float, bound: float, resumed: dict[str, float | None], why: Any) -> str:
        late = {p: None if t is None else round(t - since, 1) for p, t in resumed.items()}
        late = {p: t for p, t in late.items() if t is None or t > bound}
        return f"processing not steady again {bound:.0f}s after the fault ended: {late}\n{why()}"

    def longest_stall(self) -> tuple[float, str]:
        """The longest time any partition's committed offset stood still (between two
        advances, or from its last advance to now), and which partition: every stall
        that ended after ``moving_since`` (whole), or, if every task was never seen
        moving, every stall from the first sample on."""
        now, worst, which = time.monotonic(), 0.0, ""
        with self.lock:
            first = self.samples[0][0] if self.samples else now
        since = first if self.moving_since is None else self.moving_since
        for p, times in self.advances().items():
            points = [first, *times, now]
            gap = max((b - a for a, b in itertools.pairwise(points) if b > since), default=0.0)
            if gap > worst:
                worst, which = gap, p
        return worst, which
