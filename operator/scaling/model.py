"""What the scaling state machine reads and what it answers, as plain frozen data.

The imperative shell (``segue.operator.reconcile``) fills a :class:`World` from the
API server, the pods' metrics and Kafka's admin API, calls :func:`~.core.decide`, and
carries out the :class:`Plan`. Time is a field (``now``, seconds since the epoch), never
read from a clock, and :class:`Memory` is everything the machine must remember between
steps: the shell stores it in the StreamApp's status, so a restarted operator resumes.
The simulator builds Worlds the same way, without a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from segue.protocol.tasks import Expansion
from segue.protocol.topology import SubTopologyDescription

from .group_wait import GroupWait

LearnerPromotion = Literal["eager", "batch"]
EventType = Literal["Normal", "Warning"]
MemberRole = Literal["member", "joining", "leaving", "absent", "rolling"]
Phase = Literal["Pending", "Running", "Scaling", "Degraded", "Suspended"]


@dataclass(frozen=True)
class Policy:
    """``spec.scaling`` and ``spec.state.retention``, with durations in seconds."""

    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    scale_down_timeout: float = 600.0
    registration_timeout: float = 300.0
    expansion_timeout: float = 30.0
    balance_tolerance: float = 0.0
    learner_promotion: LearnerPromotion = "eager"
    # A member takes its first active tasks with its first handover, once warm
    # (:mod:`.promotion`); set for Kafka Streams apps
    warm_first: bool = False
    # A learner expected within the acceptable lag this many seconds from now, at its
    # rate so far, counts as caught up, twice that when another is handed over anyway
    # (:mod:`.hold`): Kafka Streams takes a handover up a rebalance after the answer, and
    # the learner restores on meanwhile
    handover_lead: float = 0.0
    # A member's new standbys wait until its learners are handed over (:mod:`.promotion`);
    # set for Kafka Streams apps, which restore a member's copies one at a time
    learners_first: bool = False
    # A leaving member departs (its pod deleted) in the step its last active task is
    # handed over, not once it applied that generation (:func:`.core._departures`): its
    # instance hands the tasks over by leaving the group, in one rebalance; set for Kafka
    # Streams apps, whose leavers close cleanly (committed) before they leave
    leave_hands_over: bool = False
    retain_state: bool = False
    max_unavailable: int = 1  # spec.rollout: pods restarting onto a new template at once


@dataclass(frozen=True)
class Roles:
    """What one member runs in one generation (task ids, sorted)."""

    active: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()
    learning: tuple[str, ...] = ()

    def tasks(self) -> tuple[str, ...]:
        return self.active + self.standby + self.learning


@dataclass(frozen=True)
class Published:
    """The assignment document of docs/protocol.md, as last written."""

    generation: int
    members: Mapping[str, Roles]
    partition_map: Mapping[int, Expansion] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskFault:
    """Why a member cannot run a task it was given (the worker's ``segue_task_error``)."""

    reason: str
    message: str


@dataclass(frozen=True)
class PodObs:
    """One pod of the app as observed. ``reporting``: its metrics answered just now."""

    name: str
    running: bool
    terminating: bool = False
    failed: bool = False  # phase Failed or Succeeded: it will not run again
    ready: bool = False
    reporting: bool = False
    generation: int | None = None  # the assignment generation it applied
    roles: Mapping[str, str] = field(default_factory=dict)  # task -> active/standby/learning
    offsets: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # task -> store -> next
    state_bytes: Mapping[str, int] = field(default_factory=dict)  # disk usage, per task
    # key+value bytes of the changelog records its copy applied since created empty
    changelog_bytes: Mapping[str, int] = field(default_factory=dict)
    faults: Mapping[str, TaskFault] = field(default_factory=dict)  # tasks it cannot run now
    restoring: frozenset[str] = frozenset()  # its actives fenced and catching up, not processing
    # its actives that process: the previous owner fenced, the stores caught up (what
    # :meth:`runs` asks; empty: it runs nothing, whatever its roles say)
    processing: frozenset[str] = frozenset()
    template_hash: str = ""  # the spec it was built from ("": unknown, taken as current)
    # Why the pod cannot start (an init container fails), as a Degraded reason and message
    start_fault: TaskFault | None = None

    def runs(self, task: str) -> bool:
        """It processes ``task`` as its active now: it reports, holds the task active and
        runs it (neither waiting to fence the previous owner, restoring, nor failed)."""
        return self.reporting and self.roles.get(task) == "active" and task in self.processing


@dataclass(frozen=True)
class Handover:
    """A task published to a new owner, not yet seen running there."""

    to: str
    since: float


@dataclass(frozen=True)
class Progress:
    """A learner's best lag so far and when it last dropped (:mod:`.hold`), and its lag
    when it was first seen learning with the last time it was seen not restoring yet
    (``started``), so its restore rate is known (``rate``)."""

    member: str
    lag: int
    since: float
    start_lag: int
    started: float

    def rate(self) -> float | None:
        """Records/s the learner's lag has dropped since it began restoring; None before
        it dropped at all (no rate to go by yet)."""
        if self.since <= self.started or self.lag >= self.start_lag:
            return None
        return (self.start_lag - self.lag) / (self.since - self.started)

    def eta(self, acceptable_lag: int, now: float) -> float | None:
        """Seconds from ``now`` until it is within ``acceptable_lag``, at its rate so far
        (0 once within); None without a rate."""
        if self.lag <= acceptable_lag:
            return 0.0
        rate = self.rate()
        if rate is None:
            return None
        return max(0.0, (self.lag - acceptable_lag) / rate - (now - self.since))


@dataclass(frozen=True)
class Held:
    """The target kept while its learners progress (:mod:`.hold`): only what differs from
    the published owners and standbys, what it was planned for, and its learners' progress."""

    moves: Mapping[str, str] = field(default_factory=dict)  # task -> target, not there yet
    basis: Mapping[str, str] = field(default_factory=dict)  # part -> digest (hold.PARTS)
    progress: Mapping[str, Progress] = field(default_factory=dict)  # learner task -> progress
    # task -> target standbys, where they differ from the published ones
    standbys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Memory:
    """What the machine remembers between steps (stored in ``status.scaling``)."""

    joining: Mapping[str, float] = field(default_factory=dict)  # pod -> created at
    leaving: Mapping[str, float] = field(default_factory=dict)  # pod -> marked leaving at
    absent: Mapping[str, float] = field(default_factory=dict)  # member -> first seen away
    handovers: Mapping[str, Handover] = field(default_factory=dict)
    forced_at: float | None = None  # the last scale-down that hit its timeout
    last_scale: float | None = None  # when the last scale action started (status.lastScaleTime)
    rolling: Mapping[str, float] = field(default_factory=dict)  # member -> handing over since
    refenced: Mapping[str, float] = field(default_factory=dict)  # task -> published again at
    held: Held | None = None  # the target kept while its learners progress


@dataclass(frozen=True)
class Condition:
    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str


@dataclass(frozen=True)
class Replication:
    """How the app's topics are replicated, as the cluster's metadata said this look
    (:mod:`.replication` turns it into the ``KafkaReplicated`` condition)."""

    brokers: tuple[int, ...]  # the brokers the metadata lists
    partitions: int  # of the app's topics
    # (topic, partition) -> its replicas out of the ISR, for those with any
    under_replicated: Mapping[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)
    offline: tuple[tuple[str, int], ...] = ()  # partitions with no leader


@dataclass(frozen=True)
class Stall:
    """A sink or changelog partition whose last stable offset is below its high watermark
    (an open transaction holds it), and since when at that offset (:mod:`.hanging`)."""

    stable: int  # the last stable offset: where the open transaction's first record is
    since: float  # first seen there (or when the shell's watch began)


@dataclass(frozen=True)
class World:
    """One observation of one StreamApp."""

    now: float
    app: str
    application_id: str
    replicas: int
    policy: Policy
    subtopologies: tuple[SubTopologyDescription, ...] | None  # None: not known yet
    partitions: Mapping[str, int]  # topic -> partition count, for the topics that exist
    end_offsets: Mapping[tuple[str, int], int]  # changelog (topic, partition) -> last stable
    published: Published | None
    pods: Mapping[str, PodObs]  # every pod of the app that exists
    memory: Memory = field(default_factory=Memory)
    conditions: Mapping[str, Condition] = field(default_factory=dict)  # as last written
    topology_error: str | None = None  # why the topology could not be read
    template_hash: str = ""  # of the spec's pod-defining part ("": do not roll)
    replication: Replication | None = None  # None: not read this look
    # The app's sink and changelog partitions held below their high watermark, as the
    # shell watched them since ``watched_since`` (None: not read this look); the
    # bootstrap servers the commands that end a held one go to (:mod:`.hanging`)
    stalls: Mapping[tuple[str, int], Stall] | None = None
    watched_since: float | None = None
    bootstrap: str = ""
    # A Kafka Streams app's group as its coordinator showed it (None: not read this look)
    group_wait: GroupWait | None = None


@dataclass(frozen=True)
class Event:
    type: EventType
    reason: str
    message: str


@dataclass(frozen=True)
class MemberSummary:
    name: str
    role: MemberRole
    active: int
    standby: int
    learning: int
    max_lag: int | None
    ready: bool
    faults: Mapping[str, TaskFault] = field(default_factory=dict)  # of the tasks it holds


@dataclass(frozen=True)
class Assessment:
    phase: Phase
    replicas: int
    ready_replicas: int
    generation: int
    max_lag: int
    members: tuple[MemberSummary, ...]
    conditions: tuple[Condition, ...]
    updated_replicas: int = 0  # pods built from the current template

    def condition(self, type_: str) -> Condition:
        """The condition of ``type_`` (every type is always present)."""
        return next(c for c in self.conditions if c.type == type_)


@dataclass(frozen=True)
class Plan:
    """What to do now, in this order: publish, create, delete pods and claims, status."""

    publish: Published | None
    document: bytes | None  # the gzipped document of ``publish``
    create_pods: tuple[str, ...]
    delete_pods: tuple[str, ...]
    delete_claims: tuple[str, ...]  # members whose state volume claim goes
    memory: Memory
    assessment: Assessment
    events: tuple[Event, ...]
    handovers_done: tuple[tuple[str, float], ...]  # (task, seconds from publish to running)
    handovers_published: int
    learners: int
    busy: bool  # something is in flight: look again soon
    wake_at: float | None  # the next deadline (a batch closes, a timeout expires)
