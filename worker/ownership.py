"""The states of a task this worker owns, the transitions allowed between them,
and what each kind of failure means.

Pure bookkeeping, no I/O. ``taskset`` (the facade ``runtime`` and ``report``
call) and its helpers ``restoring`` and ``processing`` change a task's state only
through :meth:`Task.move_to`, which refuses any move not in :data:`TRANSITIONS`.
A task that cannot run is ``failed`` or ``fenced`` and carries a :class:`Problem`
(a reason word from ``metrics`` and a message); a failed one is retried on the
capped exponential back-off of :func:`retry_delay`, unless its error policy
stopped it. A fenced task is never retried: it leaves only by being stopped.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import Producer

from segue.worker import metrics
from segue.worker.active import ActiveTask, TaskAborted, TaskFailed, TaskFenced
from segue.worker.assignment import Role
from segue.worker.state.engine import StoreCorrupt, StoreLocked
from segue.worker.state.restore import RestoreError
from segue.worker.state.store import TaskStore
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology


class TaskState(enum.Enum):
    NEW = "new"  # just created, about to start (never reported)
    STARTING = "starting"  # an active waiting to fence its previous owner
    RESTORING = "restoring"  # an active replaying its changelog tail, after the fence
    RUNNING = "running"  # an active processing
    STANDBY = "standby"  # a standby or learner following its changelog
    FAILED = "failed"  # cannot run now; retried unless its error policy stopped it
    FENCED = "fenced"  # a newer owner took it: down until a newer generation assigns it


S = TaskState
# Processing (RUNNING) is reachable only through the fence (STARTING); nothing
# leaves FENCED (the task is stopped and, if assigned again, recreated). A task
# may be stopped (removed) from any state; that is not a transition.
TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = {
    S.NEW: frozenset({S.STARTING, S.STANDBY, S.FAILED}),
    S.STARTING: frozenset({S.RESTORING, S.RUNNING, S.STANDBY, S.FAILED, S.FENCED}),
    S.RESTORING: frozenset({S.RUNNING, S.STANDBY, S.FAILED, S.FENCED}),
    S.RUNNING: frozenset({S.STANDBY, S.FAILED, S.FENCED}),
    S.STANDBY: frozenset({S.STARTING, S.FAILED}),
    S.FAILED: frozenset({S.STARTING, S.STANDBY, S.FAILED}),
    S.FENCED: frozenset(),
}
DOWN = frozenset({S.FAILED, S.FENCED})

FIRST_RETRY = 0.5  # seconds before the first retry; doubles per failure
MAX_RETRY = 30.0


class IllegalTransition(RuntimeError):
    pass


def retry_delay(failures: int) -> float:
    """Seconds before retrying a task that failed ``failures`` times in a row."""
    return min(MAX_RETRY, FIRST_RETRY * 2.0 ** min(max(failures, 1) - 1, 32))


@dataclass(frozen=True)
class Problem:
    """Why a task cannot run: ``reason`` is one of ``metrics``' reason words."""

    reason: str
    message: str


@dataclass(frozen=True)
class Failure:
    problem: Problem
    retry: bool
    wipe: bool = False  # the local state cannot be trusted


def failure_of(exc: BaseException, default: str) -> Failure:
    """What an exception means for the task it stopped; ``default`` is the reason of errors
    that are none of the known kinds (``StartFailed`` while starting, ...)."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, TaskFenced):
        return Failure(Problem(metrics.REASON_FENCED, message), retry=False)
    if isinstance(exc, TaskFailed):
        return Failure(Problem(metrics.REASON_RECORD_FAILED, message), retry=False)
    if isinstance(exc, StoreCorrupt):
        return Failure(Problem(metrics.REASON_STORE_FAILED, message), retry=True, wipe=True)
    if isinstance(exc, (StoreLocked, RestoreError)):
        return Failure(Problem(metrics.REASON_STORE_FAILED, message), retry=True)
    if isinstance(exc, TaskAborted):
        return Failure(Problem(metrics.REASON_TRANSACTION_ABORTED, message), retry=True)
    return Failure(Problem(default, message), retry=True)


@dataclass(frozen=True)
class StoreView:
    name: str
    changelog: str
    partition: int
    offset: int  # the next changelog offset the local store will read
    end: int  # the changelog's end offset as last seen


@dataclass(frozen=True)
class TaskView:
    """A read-only copy of one task, for reports."""

    name: str
    role: Role
    state: TaskState
    stores: tuple[StoreView, ...]
    problem: Problem | None
    processed: int  # records processed by its current active instance


@dataclass
class Task:
    """One task this worker owns. ``restoring`` and ``processing`` fill in its
    resources; its state changes only through :meth:`move_to`."""

    name: str
    sub: SubTopology
    resolved: ResolvedSub
    role: Role
    generation: int
    stores: dict[str, TaskStore] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)  # store -> changelog end last seen
    active: ActiveTask | None = None
    inputs: list[tuple[str, int]] = field(default_factory=list)
    retry_at: float | None = None
    fence_at: float = 0.0
    spare: Producer | None = None  # a learner's producer, created ahead of its promotion
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    failures: int = 0
    _state: TaskState = field(default=TaskState.NEW, init=False)
    _problem: Problem | None = field(default=None, init=False)

    @property
    def state(self) -> TaskState:
        return self._state

    @property
    def problem(self) -> Problem | None:
        """Why the task is down; None unless it is failed or fenced."""
        return self._problem

    def move_to(self, target: TaskState, problem: Problem | None = None) -> None:
        """Perform a transition; a down state needs its problem, others take none."""
        if target not in TRANSITIONS[self._state]:
            raise IllegalTransition(
                f"task {self.name}: {self._state.value} -> {target.value} is not allowed"
            )
        if (problem is None) == (target in DOWN):
            raise ValueError(f"task {self.name}: {target.value} with problem {problem}")
        self._state = target
        self._problem = problem

    def view(self) -> TaskView:
        return TaskView(
            self.name,
            self.role,
            self._state,
            tuple(
                StoreView(n, s.changelog, s.partition, s.offset, self.ends.get(n, 0))
                for n, s in sorted(self.stores.items())
            ),
            self._problem,
            self.active.processed if self.active is not None else 0,
        )
