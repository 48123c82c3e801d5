"""The observed state of a StreamApp (``status``), written only by the operator.

Besides what users read (``phase``, ``members``, ``conditions``, the printer columns
and the ``/scale`` subresource's ``replicas`` and ``selector``), ``status.scaling`` is
the operator's durable memory: the scaling state machine's ``Memory``
(``segue.operator.scaling.model``) with times as RFC 3339 strings, so a restarted
operator resumes a scale-up or scale-down where the last one stopped. Every field is
optional because a new object has no status yet. Models are mutable (the operator
builds a status step by step) but still reject unknown fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.alias_generators import to_camel

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _rfc3339(value: str) -> str:
    try:
        ok = bool(_RFC3339.match(value)) and datetime.fromisoformat(value) is not None
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{value!r} is not an RFC 3339 date-time such as 2025-01-31T12:00:00Z")
    return value


Timestamp = Annotated[
    str, AfterValidator(_rfc3339), WithJsonSchema({"type": "string", "format": "date-time"})
]
"""An RFC 3339 date-time string, as Kubernetes writes times: ``2025-01-31T12:00:00Z``."""


def to_timestamp(seconds: float) -> str:
    """The one format the operator writes: RFC 3339 in UTC, to the microsecond
    (``2025-01-31T12:00:00.250000Z``), so handover times survive a round trip."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_timestamp(text: str) -> float:
    """Seconds since the epoch of any RFC 3339 time (``Z`` or an offset)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00")).timestamp()


class StatusModel(BaseModel):
    """Status models: camelCase on the wire, unknown fields rejected, mutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        use_attribute_docstrings=True,
    )


class TaskError(StatusModel):
    """A task a member was given and cannot run now (its worker retries it)."""

    task: str
    """The task id, `<subTopology>_<partition>`."""
    reason: str
    """A CamelCase word, e.g. `TopicMissing`."""
    message: str
    """What the worker says is wrong."""


class MemberStatus(StatusModel):
    """One member (worker pod) and what it runs in the current generation."""

    name: str
    """The pod's name, which is also its member id."""
    role: Literal["member", "joining", "leaving", "absent", "rolling"]
    """`member`: a settled pod; `joining`: a new pod warming up; `leaving`: a pod a
    scale-down will delete; `absent`: a member that is not running; `rolling`: a pod
    handing its tasks over to restart onto a new template."""
    active: int = Field(ge=0)
    """Tasks it runs as the active owner."""
    standby: int = Field(ge=0)
    """Standby copies it keeps."""
    learning: int = Field(ge=0)
    """Tasks it is warming up to take over."""
    max_lag: int | None = None
    """Its largest changelog lag over the tasks it restores."""
    ready: bool
    """The pod is ready: every active task it runs is restored and running."""
    errors: list[TaskError] | None = None
    """Tasks it was given and cannot run now, with why."""


class Condition(StatusModel):
    """A standard condition: Balanced, Scaling, Degraded, Progressing, KafkaReplicated or
    TransactionsEnded."""

    type: str
    """Balanced, Scaling, Degraded, Progressing, KafkaReplicated or
    TransactionsEnded."""
    status: Literal["True", "False", "Unknown"]
    reason: str
    """A CamelCase word for why the condition has its status."""
    message: str
    """A human-readable explanation."""
    last_transition_time: Timestamp
    """When the status last changed."""
    observed_generation: int | None = None
    """The metadata.generation the condition was set for."""


class Handover(StatusModel):
    """A task published to a new owner and not yet seen running there."""

    to: str
    """The member that takes the task."""
    since: Timestamp
    """When the generation that moves it was published."""


class LearnerProgress(StatusModel):
    """A learner's best lag so far and when it last dropped."""

    member: str
    """The member learning the task."""
    lag: int = Field(ge=0)
    """Its lowest changelog lag so far, in records."""
    since: Timestamp
    """When that lag was first seen; no drop for 30 s plans the target afresh."""
    start_lag: int | None = Field(default=None, ge=0)
    """Its lag when it was first seen learning the task (with ``startedAt``, its restore
    rate; absent in a status written before it was kept: the rate starts afresh)."""
    started_at: Timestamp | None = None
    """The last time it was seen not restoring yet: when it was first seen learning the
    task, moved to each later look until its lag first drops (its rate counts only the
    time it restored)."""


class HeldTarget(StatusModel):
    """The target kept while its learners progress; planned afresh only when membership,
    partitions, capacity or the spec change, a member of it fails or a learner stalls."""

    moves: dict[str, str] = {}
    """Tasks not yet on their target member, and that member."""
    standbys: dict[str, list[str]] = {}
    """Tasks whose target standbys differ from the published ones, and those members."""
    basis: dict[str, str] = {}
    """Digests of what the target was planned for: members, tasks, capacity, spec."""
    progress: dict[str, LearnerProgress] = {}
    """Each running learner's progress, by task id."""


class ScalingMemory(StatusModel):
    """The operator's scaling progress, kept here so a restarted operator resumes it."""

    joining: dict[str, Timestamp] = {}
    """Joining pods and when each was created."""
    leaving: dict[str, Timestamp] = {}
    """Leaving pods and when each was marked leaving."""
    absent: dict[str, Timestamp] = {}
    """Members not running and when each was first seen away."""
    handovers: dict[str, Handover] = {}
    """Task handovers in flight, by task id."""
    forced_at: Timestamp | None = None
    """When a scale-down last hit its timeout and deleted pods before their tasks were warm."""
    rolling: dict[str, Timestamp] = {}
    """Pods being restarted onto a new template and when each started handing over."""
    refenced: dict[str, Timestamp] = {}
    """Tasks published again because their owner reported them fenced, and when; a task
    fenced again is published again only 30 s after that."""
    held: HeldTarget | None = None
    """The target kept while its learners progress (absent when the app is at its target)."""


class AutoscalingStatus(StatusModel):
    """The autoscaling signal as last observed (docs/autoscaling.md): what every operator
    replica's external metrics API answers from, and what a human reads."""

    observed_at: Timestamp
    """When it was measured."""
    replicas_needed: float
    """Pods the input needs: its rate plus the backlog's drain, over one pod's capacity."""
    lag_records: int
    """Records behind, summed over the input partitions."""
    input_records_per_second: float
    """What arrives."""
    processed_records_per_second: float
    """What the app processes."""
    seconds_to_catch_up: float | None = None
    """At today's capacity; absent when it never catches up (input outruns processing)."""
    projected_seconds_to_catch_up: float | None = None
    """Once the handovers in flight have landed; absent when it never catches up."""
    unknown: str | None = None
    """Why the signal is not served as a value now (measuring the input again after
    Kafka was unavailable); absent when it is."""


class StreamAppStatus(StatusModel):
    """The observed state of a stream application, written by the operator."""

    phase: Literal["Pending", "Running", "Scaling", "Degraded", "Suspended"] | None = None
    """Pending: no worker runs yet; Running: settled; Scaling: tasks are moving;
    Suspended: `replicas: 0`, every task handed off and no pod left;
    Degraded: something needs attention (see the conditions)."""
    replicas: int | None = None
    """Worker pods that exist."""
    ready_replicas: int | None = None
    """Worker pods that are ready."""
    updated_replicas: int | None = None
    """Worker pods running the current `spec.template`."""
    selector: str | None = None
    """The label selector of the worker pods (for the scale subresource)."""
    assignment_generation: int | None = None
    """The generation of the last published assignment."""
    max_lag: int | None = None
    """The largest changelog lag of any learner or standby."""
    observed_generation: int | None = None
    """The metadata.generation of the spec this status reflects."""
    last_scale_time: Timestamp | None = None
    """When the operator last started a scale action (pods joining or leaving), as an
    HorizontalPodAutoscaler's status says it."""
    members: list[MemberStatus] | None = None
    """Every member the operator manages."""
    conditions: list[Condition] | None = None
    """Balanced, Scaling and Degraded."""
    scaling: ScalingMemory | None = None
    """The operator's memory of a scale action in flight."""
    autoscaling: AutoscalingStatus | None = None
    """The autoscaling signal, refreshed at most every few seconds."""


def find_condition(conditions: Iterable[Condition] | None, type_: str) -> Condition | None:
    """The condition of ``type_``, found by type (never by position), or None."""
    return next((c for c in conditions or () if c.type == type_), None)
