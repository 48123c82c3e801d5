"""The screen as data: what ``segue status`` shows, and its ``-o json`` document.

Plain frozen dataclasses, so the text view and the JSON are one thing seen twice. The
JSON is meant for scripts: :data:`SCHEMA` names its version, field names are snake_case
and stay; a new field may be added, none is renamed or removed within a version. What
each field means: docs/status.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "segue.dev/status/v1"


@dataclass(frozen=True)
class ConditionRow:
    type: str
    status: str  # True / False / Unknown
    reason: str
    message: str
    since: str  # lastTransitionTime, RFC 3339


@dataclass(frozen=True)
class PodRow:
    """One worker pod (or a member the operator lists whose pod is gone)."""

    name: str
    role: str  # the StreamApp's member role; "-" before the operator lists the pod
    ready: bool
    deleting: bool
    active: int
    standby: int
    learning: int
    max_lag: int | None  # its largest changelog lag over the copies it restores
    tasks: dict[str, str] = field(default_factory=dict)  # task -> role, from its metrics
    errors: list[str] = field(default_factory=list)  # "task Reason: message"
    metrics_error: str | None = None  # why its /metrics could not be read; None: read
    # where active/standby/learning come from: "metrics" (the pod's own page), "status"
    # (the StreamApp's member list: its metrics unread, or a Kafka Streams pod, whose
    # agent page names no task) or "none" (neither: zeros)
    counts_from: str = "metrics"


@dataclass(frozen=True)
class LearnerRow:
    """A task a member is warming up to take over."""

    task: str | None  # None: the member learns, no source named the task yet ("members")
    member: str
    lag: int  # changelog records still to restore
    restored: int | None  # records restored so far (its metrics), summed over stores
    end: int | None  # the changelog's end as the learner saw it, summed over stores
    rate: float | None  # records/s it catches up, between two reads; None: one read only
    eta_seconds: float | None  # lag / rate; None: rate unknown or zero
    # "metrics" (the pod's /metrics), "status" (the operator's held progress) or "members"
    # (the status's member list: its learning count and largest lag, no task named)
    source: str


@dataclass(frozen=True)
class HandoverRow:
    task: str
    to: str
    from_: str | None  # None: not said (a handover in flight names only its new owner)
    state: str  # "in-flight" (published, not yet running there) or "done"
    at: str | None  # RFC 3339: when published (in flight) or when the event said it (done)


@dataclass(frozen=True)
class EventRow:
    type: str  # Normal / Warning
    reason: str
    message: str
    count: int
    last: str | None  # RFC 3339


@dataclass(frozen=True)
class Screen:
    app: str
    namespace: str
    at: str  # when it was read, RFC 3339
    phase: str | None
    replicas: int | None  # spec.replicas: what was asked for
    pods_ready: int
    generation: int | None  # the last published assignment's generation
    waiting_for: str
    conditions: list[ConditionRow]
    pods: list[PodRow]
    learners: list[LearnerRow]
    handovers: list[HandoverRow]
    events: list[EventRow]
    replicas_needed: float | None = None  # the autoscaling signal, when there is one

    def to_json(self) -> dict[str, Any]:
        """The ``-o json`` document (docs/status.md, "JSON")."""
        body = dataclasses.asdict(self)
        for row in body["handovers"]:
            row["from"] = row.pop("from_")
        return {"schema": SCHEMA, **body}
