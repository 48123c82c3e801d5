"""What one (scenario, policy) run costs, accumulated tick by tick into an :class:`Outcome`.

The metrics (docs/pipeline.md, "Metrics"): *time to balance* after each disturbance
(a scale event, a pod loss, a partition expansion) until the controller says nothing is
in flight and the assignment is balanced over the pods the spec asks for;
*task-seconds unavailable*: ticks times tasks with no owner processing them; *records
processed late*: records that waited past the tick they arrived in (and, at the end,
those still waiting); *state bytes restored* by every copy; *generations published*;
*peak skew* of the published assignments, per member (active tasks, stateful active
tasks, worst sub-topology); *pod-hours* that existed (starting pods count: they cost).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from segue.operator.scaling import Published


@dataclass(frozen=True)
class Outcome:
    scenario: str
    policy: str
    time_to_balance: float | None  # worst over disturbances; None: some never balanced
    unbalanced: str | None  # why, at the end, when some never balanced
    balance_times: tuple[float | None, ...]  # one per disturbance, in order
    task_seconds_unavailable: float
    records_processed_late: float
    records_processed: float
    state_bytes_restored: float
    generations_published: int
    handovers: int  # tasks that changed active owner
    peak_active_skew: int
    peak_stateful_skew: int
    peak_subtopology_skew: int
    final_active_skew: int
    pod_hours: float


@dataclass
class Meter:
    unavailable: float = 0.0
    late: float = 0.0
    done: float = 0.0
    bytes: float = 0.0
    pod_seconds: float = 0.0
    handovers: int = 0
    generation_count: int = 0
    skew: tuple[int, int, int] = (0, 0, 0)
    last_skew: tuple[int, int, int] = (0, 0, 0)
    disturbed: list[float] = field(default_factory=list)
    balanced: list[float | None] = field(default_factory=list)

    def restored(self, nbytes: float) -> None:
        self.bytes += nbytes

    def processed(self, records: float, late: float) -> None:
        self.done += records
        self.late += late

    def tick(self, tick: float, unavailable: int, pods: int) -> None:
        self.unavailable += unavailable * tick
        self.pod_seconds += pods * tick

    def disturbance(self, now: float) -> None:
        self.disturbed.append(now)
        self.balanced.append(None)

    def settled(self, now: float) -> None:
        for i, since in enumerate(self.disturbed):
            if self.balanced[i] is None:
                self.balanced[i] = now - since

    def generation(
        self, before: Published | None, after: Published, stateful: set[str], subs: dict[str, int]
    ) -> None:
        self.generation_count += 1
        old = {t: m for m, r in (before.members if before else {}).items() for t in r.active}
        self.handovers += sum(
            1 for m, r in after.members.items() for t in r.active if old.get(t, m) != m
        )
        self.last_skew = skews(after, stateful, subs)
        self.skew = (
            max(self.skew[0], self.last_skew[0]),
            max(self.skew[1], self.last_skew[1]),
            max(self.skew[2], self.last_skew[2]),
        )


def skews(p: Published, stateful: set[str], subs: dict[str, int]) -> tuple[int, int, int]:
    """(active, stateful active, worst sub-topology) max-minus-min over the members."""
    members = list(p.members.values())
    if not members:
        return 0, 0, 0

    def spread(counts: list[int]) -> int:
        return max(counts) - min(counts)

    active = spread([len(r.active) for r in members])
    state = spread([sum(1 for t in r.active if t in stateful) for r in members])
    per_sub = [Counter(subs[t] for t in r.active if t in subs) for r in members]
    worst = max((spread([c[s] for c in per_sub]) for s in set(subs.values())), default=0)
    return active, state, worst
