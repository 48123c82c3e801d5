"""A recorded history back into scenarios: every parameter read off the rows.

The operator records a :class:`HistoryRecord` per step that changed something and the
simulator emits one per tick (:mod:`.history`); both turn into the :class:`Scenario`
that replays them (docs/pipeline.md, "From a history to a scenario"). Per app
(``namespace/app``), in time order:

- the start is the first row of the calm (balanced rows: every member running its
  share, no learners) that the first disturbance ends, else the first row; times
  count from it;
- sub-topologies and their task counts come from ``subtopologies`` (else from the task
  ids); a stateful task's state is its changelog as last recorded up to the first
  disturbance, its record size the sub-topology's bytes over records;
- the restore rate is the median copy's (over its restoring span), the startup delay the
  median of the pods that appeared (the step that created one to the first step that
  saw it running), the pod rate the most a member was seen processing, the load what
  the first sub-topology processed per partition between rows (a lower bound when the
  app fell behind), the changelog ratio changelog growth over records processed;
- a scale event wherever ``spec_replicas`` changed, a pod loss wherever a running
  member's pod vanished (absent, or a new pod starting in its place) while it was not
  ``leaving``.

Pure: no clock, no I/O. A parameter nothing in the rows shows keeps the Scenario's default.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Iterable, Sequence

from segue.protocol.history import HistoryRecord, TaskRecord
from segue.protocol.tasks import TaskId

from .recorded_rates import load_steps, pod_rate, ratio, restore_rate
from .scenario import LoadStep, PodLost, ScaleTo, Scenario, ScenarioEvent, SubTopology

TAIL = 60.0  # seconds a scenario runs past the last row, so a slower replay still settles


def to_scenarios(records: Iterable[HistoryRecord], *, tail: float = TAIL) -> list[Scenario]:
    """One Scenario per app of ``records`` (in any order), by ``namespace/app``."""
    by_app: dict[tuple[str, str], list[HistoryRecord]] = {}
    for row in records:
        by_app.setdefault((row.namespace, row.app), []).append(row)
    return [to_scenario(rows, tail=tail) for _, rows in sorted(by_app.items())]


def to_scenario(rows: Sequence[HistoryRecord], *, tail: float = TAIL) -> Scenario:
    """The Scenario of one app's rows."""
    rows = sorted(rows, key=lambda r: r.time)
    disturbed = first_disturbance(rows)
    start = _start(rows, disturbed)
    rows = rows[start:]
    t0 = rows[0].time
    early = rows[: (disturbed - start + 1) if disturbed is not None else 1]
    state = _state(early)
    events: list[ScenarioEvent] = []
    for before, row in itertools.pairwise(rows):
        at = round(row.time - t0, 6)
        if row.spec_replicas != before.spec_replicas:
            events.append(ScaleTo(at=at, replicas=row.spec_replicas))
        events.extend(PodLost(at=at, ordinal=o) for o in _lost(before, row))
    name = f"{rows[0].namespace}/{rows[0].app}" if rows[0].namespace else rows[0].app
    delay = startup_delays(rows)
    # what was processed before the first disturbance is in the state read at it
    load = load_steps(rows[(disturbed - start) if disturbed is not None else 0 :], t0)
    return Scenario(
        name=name,
        app=rows[0].app,
        replicas=max(1, rows[0].spec_replicas),
        duration=max(rows[-1].time - t0, 0.0) + tail,
        pod_rate=pod_rate(rows) or Scenario.model_fields["pod_rate"].default,
        startup_delay=statistics.median(delay) if delay else 20.0,
        subtopologies=_subtopologies(rows, early, state),
        load=load or [LoadStep(at=0, rate=0.0)],
        events=events,
    )


def balanced(row: HistoryRecord) -> bool:
    """Every pod the spec asks for is a member running its share; nobody learns or leaves."""
    members = [m for m in row.members if m.state == "member"]
    counts = [len(m.active) for m in members]
    return (
        len(members) == len(row.members) == row.spec_replicas > 0
        and max(counts) - min(counts) <= 1
        and not any(m.learning for m in members)
    )


def first_disturbance(rows: Sequence[HistoryRecord]) -> int | None:
    """The index of the first row whose spec changed or which lost a pod."""
    for i in range(1, len(rows)):
        if rows[i].spec_replicas != rows[i - 1].spec_replicas or _lost(rows[i - 1], rows[i]):
            return i
    return None


def _start(rows: Sequence[HistoryRecord], disturbed: int | None) -> int:
    """The first row of the calm (balanced rows in a row) that the first disturbance
    ends; without a disturbance, the first balanced row; else the first row."""
    if disturbed is None:
        return next((i for i, r in enumerate(rows) if balanced(r)), 0)
    start = disturbed
    while start > 0 and balanced(rows[start - 1]):
        start -= 1
    return start if start < disturbed else 0


def _lost(before: HistoryRecord, row: HistoryRecord) -> list[int]:
    """Members whose running pod vanished (absent now, or a new pod starting in its place)."""
    had = {m.name for m in before.members if m.state in ("member", "joining")}
    gone = sorted(
        m.name for m in row.members if m.state in ("absent", "starting") and m.name in had
    )
    return [o for o in (_ordinal(row.app, n) for n in gone) if o is not None]


def _ordinal(app: str, pod: str) -> int | None:
    match = re.fullmatch(re.escape(app) + r"-(0|[1-9][0-9]*)", pod)
    return int(match.group(1)) if match else None


def _state(rows: Sequence[HistoryRecord]) -> dict[str, TaskRecord]:
    """Each stateful task's changelog as last recorded in ``rows``."""
    last: dict[str, TaskRecord] = {}
    for row in rows:
        last.update({t.task: t for t in row.tasks})
    return last


def startup_delays(rows: Sequence[HistoryRecord]) -> list[float]:
    """Per pod that appeared: the step that created it to the first step that saw it run."""
    delays = []
    seen = {m.name for m in rows[0].members if m.state != "absent"}
    for i in range(1, len(rows)):
        for m in rows[i].members:
            if m.name in seen or m.state == "absent":
                continue
            seen.add(m.name)
            up = next(
                (r.time for r in rows[i:] if _state_of(r, m.name) not in ("starting", "absent")),
                None,
            )
            if up is not None:
                delays.append(round(up - rows[i - 1].time, 6))
    return delays


def _state_of(row: HistoryRecord, name: str) -> str:
    return next((m.state for m in row.members if m.name == name), "absent")


def _subtopologies(
    rows: Sequence[HistoryRecord], early: Sequence[HistoryRecord], state: dict[str, TaskRecord]
) -> list[SubTopology]:
    # the topology as last recorded up to the first disturbance (internal topics, and so
    # sub-topologies, appear once the workers created them), else as first recorded
    known = [r.subtopologies for r in early if r.subtopologies]
    described = known[-1] if known else next((r.subtopologies for r in rows if r.subtopologies), [])
    shape = {s.id: (s.tasks, s.stateful) for s in described}
    if not shape:
        for t in _task_ids(rows):
            tasks, stateful = shape.get(t.subtopology, (0, False))
            shape[t.subtopology] = (max(tasks, t.partition + 1), stateful or str(t) in state)
    out = []
    for sid, (tasks, stateful) in sorted(shape.items()):
        mine = [state.get(f"{sid}_{p}") for p in range(tasks)]
        records = sum(t.changelog_records for t in mine if t)
        size = sum(t.changelog_bytes for t in mine if t)
        out.append(
            SubTopology(
                id=sid,
                partitions=tasks,
                state_bytes=[t.changelog_bytes if t else 0 for t in mine] if stateful else [],
                record_bytes=max(1, round(size / records)) if records else 1_000,
                restore_rate=restore_rate(rows, sid) or 20_000.0,
                changelog_ratio=ratio(rows, sid) if stateful else 0.0,
            )
        )
    return out


def _task_ids(rows: Sequence[HistoryRecord]) -> set[TaskId]:
    names = {c.task for r in rows for c in r.copies}
    names |= {t for r in rows for m in r.members for t in (*m.active, *m.standby, *m.learning)}
    return {TaskId.parse(t) for t in names}
