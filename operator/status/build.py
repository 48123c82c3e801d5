"""From what the API server gave (the StreamApp, its pods, its events, each pod's
``/metrics`` page) to a :class:`~.model.Screen`. Pure: data in, data out, so every rule
here is tested on literal inputs (tests/operator/test_status_view.py).

Two sources, one answer: the operator's status always says each member's role and task
counts and, while a target is held, each learner's best lag (``scaling.held.progress``);
a pod's metrics, when the pod proxy reaches it, say more (which tasks, restored offsets,
the lag right now). Metrics win where both speak; a pod that cannot be read is said, and
the status still fills its row. A Kafka Streams app's pods (``runtime: kafka-streams``)
serve the plugin's agent page, which names no task of its own (the operator assembles
what such a pod holds from the group's report and the published assignment,
``kstreams.pods``): their counts, and their learners, are the status's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from segue.operator.api.status import (
    LearnerProgress,
    MemberStatus,
    StreamAppStatus,
    from_timestamp,
)
from segue.operator.observe.scrape import WorkerReport
from segue.operator.scaling.events import HANDED_OVER, HANDOVER_PAIR
from segue.operator.scaling.hold import STALL_SECONDS
from segue.operator.scaling.model import Progress

from .model import ConditionRow, EventRow, HandoverRow, LearnerRow, PodRow, Screen
from .progress import Rates, eta
from .waiting import waiting

RECENT_EVENTS = 6


@dataclass(frozen=True)
class Pod:
    """What the pod list says of one pod."""

    name: str
    ready: bool
    deleting: bool


@dataclass(frozen=True)
class Restore:
    """One copy a pod restores: its restored offset and the changelog's end (summed over
    the task's stores), and the role it restores for."""

    task: str
    role: str
    restored: int
    end: int

    @property
    def lag(self) -> int:
        return max(0, self.end - self.restored)


def counts(report: WorkerReport) -> dict[str, int]:
    """Tasks per role (active, standby, learning) a worker's metrics say it runs."""
    roles = list(report.roles.values())
    return {role: roles.count(role) for role in ("active", "standby", "learning")}


def restores(report: WorkerReport) -> list[Restore]:
    """Every copy the pod is still restoring (an active copy that caught up is done)."""
    found = []
    for task, ends in sorted(report.changelog_end.items()):
        end = sum(ends.values())
        done = sum(report.restored.get(task, {}).values())
        role = report.roles.get(task, "-")
        if end <= 0 or (done >= end and role == "active"):
            continue
        found.append(Restore(task, role, done, end))
    return found


def pod_rows(
    pods: Sequence[Pod],
    status: StreamAppStatus,
    reports: Mapping[str, WorkerReport | str],
    *,
    agents: bool = False,
) -> list[PodRow]:
    """One row per pod, then per member the operator lists whose pod is gone. ``agents``:
    the pages are Kafka Streams agents' (no task counts: the status gives them)."""
    members = {m.name: m for m in status.members or []}
    rows = [_pod_row(p, members.get(p.name), reports.get(p.name), agents) for p in pods]
    listed = {p.name for p in pods}
    gone = Pod(name="", ready=False, deleting=False)
    for name, member in sorted(members.items()):
        if name not in listed:
            row = _pod_row(gone, member, "no pod", agents)
            rows.append(PodRow(**{**row.__dict__, "name": name}))
    return rows


def _pod_row(
    pod: Pod, member: MemberStatus | None, report: WorkerReport | str | None, agents: bool
) -> PodRow:
    role = member.role if member is not None else "-"
    errors = [f"{e.task} {e.reason}: {e.message}" for e in (member.errors or [])] if member else []
    if isinstance(report, WorkerReport) and not agents:
        n = counts(report)
        lags = [r.lag for r in restores(report) if r.role != "active"]
        return PodRow(
            pod.name, role, pod.ready, pod.deleting, n["active"], n["standby"], n["learning"],
            max(lags) if lags else (member.max_lag if member else None),
            tasks=dict(sorted(report.roles.items())), errors=errors,
        )  # fmt: skip
    # an agent's page that was read is no error; its counts are the status's all the same
    why = None if isinstance(report, WorkerReport) else report or "not read"
    if member is None:
        return PodRow(
            pod.name, role, pod.ready, pod.deleting, 0, 0, 0, None, metrics_error=why,
            counts_from="none",
        )  # fmt: skip
    return PodRow(
        pod.name, role, pod.ready, pod.deleting, member.active, member.standby,
        member.learning, member.max_lag, errors=errors, metrics_error=why, counts_from="status",
    )  # fmt: skip


def held_rate(progress: LearnerProgress, at: float) -> float | None:
    """Records/s the learner's lag dropped from where it began restoring to its best
    (``startLag``/``startedAt`` to ``lag``/``since``: ``Progress.rate``); None
    before a drop, in a status written before the operator kept where it started, or
    once that best is ``STALL_SECONDS`` old at ``at`` (a stalled learner: an average
    of its past would promise an end it is not heading for)."""
    if progress.start_lag is None or progress.started_at is None:
        return None
    since, started = from_timestamp(progress.since), from_timestamp(progress.started_at)
    if at - since >= STALL_SECONDS:
        return None
    return Progress(progress.member, progress.lag, since, progress.start_lag, started).rate()


def learners(
    status: StreamAppStatus, reports: Mapping[str, WorkerReport | str], rates: Rates, at: float
) -> list[LearnerRow]:
    """Every learner: from its pod's metrics when read, else from the operator's held
    progress, else (no task named yet) one row per learning member from its count and
    largest lag; each with the rate since the last read and the ETA at that rate."""
    rows: dict[tuple[str, str], LearnerRow] = {}
    for pod, report in sorted(reports.items()):
        if not isinstance(report, WorkerReport):
            continue
        for copy in restores(report):
            if copy.role != "learning":
                continue
            rate = rates.observe((pod, copy.task, "metrics"), at, copy.restored)
            lag = report.lag.get(copy.task, copy.lag)
            rows[(pod, copy.task)] = LearnerRow(
                copy.task, pod, lag, copy.restored, copy.end, rate, eta(lag, rate), "metrics"
            )
    held = status.scaling.held if status.scaling else None
    for task, progress in sorted((held.progress if held else {}).items()):
        if (progress.member, task) in rows:
            continue
        if isinstance(reports.get(progress.member), WorkerReport):
            continue  # its metrics say it no longer learns the task
        rate = rates.observe((progress.member, task, "status"), at, -progress.lag)
        if rate is None:  # one read: the operator's own account of it since it started
            rate = held_rate(progress, at)
        rows[(progress.member, task)] = LearnerRow(
            task, progress.member, progress.lag, None, None, rate, eta(progress.lag, rate),
            "status",
        )  # fmt: skip
    named = {member for member, _ in rows}
    for m in status.members or []:
        if m.learning and m.name not in named and not isinstance(reports.get(m.name), WorkerReport):
            # Before the operator holds a target it names no learner's task: the member's
            # count and largest lag are all there is.
            lag = m.max_lag or 0
            rate = rates.observe((m.name, None, "members"), at, -lag)
            rows[(m.name, "")] = LearnerRow(
                None, m.name, lag, None, None, rate, eta(lag, rate), "members"
            )
    return sorted(rows.values(), key=lambda r: (-r.lag, r.member, r.task or ""))


def handovers(status: StreamAppStatus, events: Sequence[EventRow]) -> list[HandoverRow]:
    """Handovers in flight (the operator's memory), then those the latest
    ``TaskHandedOver`` event names (events are aggregated: one object per reason, the
    latest message)."""
    rows = [
        HandoverRow(task, h.to, None, "in-flight", h.since)
        for task, h in sorted((status.scaling.handovers if status.scaling else {}).items())
    ]
    for event in events:
        if event.reason != HANDED_OVER:
            continue
        _, _, listed = event.message.partition(": ")
        for item in re.sub(r" and \d+ more$", "", listed).split(", "):
            found = HANDOVER_PAIR.match(item.strip())
            if found:
                task, old, new, _ = found.groups()
                rows.append(HandoverRow(task, new, old, "done", event.last))
    return rows


@dataclass(frozen=True)
class Read:
    """One read of everything the screen needs (``fetch.read`` makes it)."""

    app: str
    namespace: str
    obj: Mapping[str, Any]  # the StreamApp
    pods: list[Pod]
    events: list[EventRow]
    reports: dict[str, WorkerReport | str]  # pod -> its parsed /metrics page, or why not


def screen(read: Read, rates: Rates, at: float) -> Screen:
    """The whole screen, from one read of everything at ``at`` (seconds)."""
    app, namespace, obj, pods = read.app, read.namespace, read.obj, read.pods
    events, reports = read.events, read.reports
    status = StreamAppStatus.model_validate(obj.get("status") or {})
    spec = obj.get("spec") or {}
    agents = spec.get("runtime") == "kafka-streams"  # pages that say no task: see above
    latest = sorted(events, key=lambda e: e.last or "", reverse=True)
    signal = status.autoscaling
    return Screen(
        app=app,
        namespace=namespace,
        at=datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        phase=status.phase,
        replicas=spec.get("replicas"),
        pods_ready=sum(1 for p in pods if p.ready),
        generation=status.assignment_generation,
        waiting_for=waiting(status),
        conditions=[
            ConditionRow(c.type, c.status, c.reason, c.message, c.last_transition_time)
            for c in status.conditions or []
        ],
        pods=pod_rows(pods, status, reports, agents=agents),
        learners=learners(status, {} if agents else reports, rates, at),
        handovers=handovers(status, latest),
        events=latest[:RECENT_EVENTS],
        # no number while the leader serves none (measuring the input again after an outage)
        replicas_needed=signal.replicas_needed
        if signal is not None and not signal.unknown
        else None,
    )
