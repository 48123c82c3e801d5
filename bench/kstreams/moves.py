"""Handovers of the counting tasks during one scale, and the fewest that balance needs.

Pure, for both sides: a timeline of ``(time, {task: owner})`` (Segue's published
generations, Kafka Streams' instances' task reports merged) gives every change of a
counting task's active owner. A task with no owner for a moment (revoked, not yet
assigned) has not moved; it moves when it gets an owner other than its last one.
*Needed* is what balance forces: each instance gives up what it holds above its final
share, so 2 for 2 -> 3 and 3 for 3 -> 6 with 6 counting tasks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .events import STATEFUL, TaskEvent

Owners = Mapping[str, str]  # task -> the instance running it as active


@dataclass(frozen=True)
class Move:
    time: float
    task: str
    source: str
    target: str


@dataclass(frozen=True)
class Moves:
    moves: list[Move]
    needed: int

    @property
    def count(self) -> int:
        return len(self.moves)

    @property
    def twice(self) -> list[str]:
        """Counting tasks that changed hands more than once."""
        counts = Counter(m.task for m in self.moves)
        return sorted(t for t, n in counts.items() if n > 1)

    def describe(self) -> str:
        twice = f", moved twice: {', '.join(self.twice)}" if self.twice else ""
        listed = ", ".join(f"{m.task} {m.source} -> {m.target}" for m in self.moves)
        return f"{self.count} handovers, {self.needed} needed ({listed}){twice}"


def counting_moves(timeline: Iterable[tuple[float, Owners]]) -> Moves:
    """The counting tasks' owner changes along ``timeline`` (in time order; the first
    entry is the assignment at the scale request)."""
    last: dict[str, str] = {}
    first: dict[str, str] | None = None
    moves: list[Move] = []
    for when, owners in timeline:
        counting = {t: m for t, m in owners.items() if t.startswith(STATEFUL)}
        if first is None:
            first = dict(counting)
        for task, owner in sorted(counting.items()):
            before = last.get(task)
            if before is not None and before != owner:
                moves.append(Move(when, task, before, owner))
            last[task] = owner
    return Moves(moves, needed(first or {}, last))


def needed(before: Owners, after: Owners) -> int:
    """Tasks the instances must give up: each above its final share gives up the excess."""
    held, kept = Counter(before.values()), Counter(after.values())
    return sum(max(0, n - kept.get(member, 0)) for member, n in held.items())


def reports_timeline(
    reports: Mapping[str, Sequence[TaskEvent]], since: float
) -> list[tuple[float, dict[str, str]]]:
    """Kafka Streams' owners over time from every instance's task reports: the owners at
    ``since`` (Unix s), then after each later report. A task two instances report active
    at once (a report not yet superseded) stays with its last owner until one lets go."""
    events = sorted(
        ((e.t / 1000, name, e) for name, es in reports.items() for e in es), key=lambda x: x[0]
    )
    current: dict[str, frozenset[str]] = {}
    out: list[tuple[float, dict[str, str]]] = []
    owners: dict[str, str] = {}

    def owners_now() -> dict[str, str]:
        now: dict[str, str] = {}
        for task in {t for active in current.values() for t in active}:
            holders = sorted(n for n, active in current.items() if task in active)
            now[task] = owners[task] if owners.get(task) in holders else holders[0]
        return now

    for when, name, event in events:
        if when >= since and not out:
            owners = owners_now()
            out.append((since, owners))
        current[name] = frozenset(event.active)
        if when >= since:
            owners = owners_now()
            out.append((when, owners))
    if not out:
        out.append((since, owners_now()))
    return out
