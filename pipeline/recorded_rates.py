"""The rates a recorded history shows: restore, processing, input load, changelog growth.

Split from :mod:`.recorded` (which reads the shape and the timeline). Every rate is
measured between consecutive rows of one app, so a history recorded only on change
(the operator's) gives averages over the gaps: a restore that finished inside one gap
looks slower than it ran, which is why the restore rate is the fastest ever seen and
not a mean. A rate nothing shows is 0.0 (the caller falls back to a default).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from segue.protocol.history import HistoryRecord
from segue.protocol.tasks import TaskId

from .scenario import LoadStep


def _sub(task: str) -> int:
    return TaskId.parse(task).subtopology


def restore_rate(rows: Sequence[HistoryRecord], sub: int) -> float:
    """How fast a copy of ``sub``'s tasks restores, records/s: per copy, the records it
    restored over the span from the row before its first progress to its last (a paced
    restore measured over its whole run, not over one short gap), the median over copies
    (a copy seen restoring in one short gap only is a burst, not a rate)."""
    spans: dict[tuple[str, str], list[float]] = {}  # copy -> [records, from, to]
    for before, row in itertools.pairwise(rows):
        dt = row.time - before.time
        for c in row.copies:
            if c.restore_rate > 0 and dt > 0 and _sub(c.task) == sub:
                span = spans.setdefault((c.member, c.task), [0.0, before.time, row.time])
                span[0] += c.restore_rate * dt
                span[2] = row.time
    rates = [n / (end - start) for n, start, end in spans.values()]
    return statistics.median(rates) if rates else 0.0


def pod_rate(rows: Sequence[HistoryRecord]) -> float:
    """The most records/s one member was seen processing (a lower bound of what it can)."""
    best = 0.0
    for before, row in itertools.pairwise(rows):
        dt = row.time - before.time
        done = {t.task: t.processed for t in row.tasks if t.processed is not None}
        if dt <= 0 or not done:
            continue
        for m in row.members:
            best = max(best, sum(done.get(t, 0) for t in m.active) / dt)
    return best


def load_steps(rows: Sequence[HistoryRecord], t0: float) -> list[LoadStep]:
    """Input records/s per partition of the first sub-topology, one step per gap between
    rows that say what it processed (equal neighbours merged)."""
    steps: list[LoadStep] = []
    for before, row in itertools.pairwise(rows):
        subs = sorted(s.id for s in row.subtopologies)
        dt = row.time - before.time
        if not subs or dt <= 0:
            continue
        first = next(s for s in row.subtopologies if s.id == subs[0])
        done = [t.processed for t in row.tasks if _sub(t.task) == first.id]
        if not done or None in done:
            continue
        rate = round(sum(d or 0 for d in done) / dt / first.tasks, 6)
        if not steps or steps[-1].rate != rate:
            steps.append(LoadStep(at=round(max(0.0, before.time - t0), 6), rate=rate))
    return steps


def ratio(rows: Sequence[HistoryRecord], sub: int) -> float:
    """Changelog records written per input record processed, by ``sub``'s tasks."""
    grown = processed = 0
    for before, row in itertools.pairwise(rows):
        was = {t.task: t.changelog_records for t in before.tasks}
        for t in row.tasks:
            if _sub(t.task) == sub and t.processed and t.task in was:
                grown += max(0, t.changelog_records - was[t.task])
                processed += t.processed
    return grown / processed if processed else 0.0
