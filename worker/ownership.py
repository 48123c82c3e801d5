"""The states of a task this worker owns and the transitions allowed between them.

Pure bookkeeping, no I/O. ``taskset`` (the facade ``runtime`` and ``report``
call) and its helpers ``restoring`` and ``processing`` change a task's state only
through :meth:`Task.move_to`, which refuses any move not in :data:`TRANSITIONS`.
A task that cannot run is ``failed`` or ``fenced`` and carries a ``failures.Cause``;
a failed one is retried on the back-off of ``failures.retry_delay``, unless its
error policy stopped it. A fenced task is never retried: it leaves only by being
stopped (and, if assigned again, recreated).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import Producer

from segue.protocol import Role
from segue.protocol.reports import TaskState
from segue.worker.active import ActiveTask
from segue.worker.failures import Cause, retry_delay
from segue.worker.state.store import TaskStore
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology

S = TaskState  # the states are the contract's: segue_task_state reports them
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


class IllegalTransition(RuntimeError):
    pass


@dataclass(frozen=True)
class StoreView:
    name: str
    changelog: str
    partition: int
    offset: int  # the next changelog offset the local store will read
    end: int  # the changelog's end offset as last seen
    changelog_records: int = 0  # applied since the store was created empty (TaskStore)
    changelog_bytes: int = 0


@dataclass(frozen=True)
class TaskView:
    """A read-only copy of one task, for reports."""

    name: str
    role: Role
    state: TaskState
    stores: tuple[StoreView, ...]
    cause: Cause | None
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
    failed_at: float = 0.0  # monotonic: when it last failed (``recovery``)
    fence_at: float = 0.0
    spare: Producer | None = None  # a learner's producer, created ahead of its promotion
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    failures: int = 0
    _state: TaskState = field(default=TaskState.NEW, init=False)
    _cause: Cause | None = field(default=None, init=False)

    @property
    def state(self) -> TaskState:
        return self._state

    @property
    def cause(self) -> Cause | None:
        """Why the task is down; None unless it is failed or fenced."""
        return self._cause

    def move_to(self, target: TaskState, cause: Cause | None = None) -> None:
        """Perform a transition; a down state needs its cause, others take none."""
        if target not in TRANSITIONS[self._state]:
            raise IllegalTransition(
                f"task {self.name}: {self._state.value} -> {target.value} is not allowed"
            )
        if (cause is None) == (target in DOWN):
            raise ValueError(f"task {self.name}: {target.value} with cause {cause}")
        self._state = target
        self._cause = cause

    def retry_due(self, now: float) -> bool:
        return (
            self._state is TaskState.FAILED and self.retry_at is not None and self.retry_at <= now
        )

    def schedule_retry(self, now: float) -> float:
        """One more failure in a row: the retry waits longer. The delay, in seconds."""
        self.failures += 1
        delay = retry_delay(self.failures)
        self.retry_at = now + delay
        return delay

    def view(self) -> TaskView:
        return TaskView(
            self.name,
            self.role,
            self._state,
            tuple(
                StoreView(
                    n,
                    s.changelog,
                    s.partition,
                    s.offset,
                    self.ends.get(n, 0),
                    s.changelog_records,
                    s.changelog_bytes,
                )
                for n, s in sorted(self.stores.items())
            ),
            self._cause,
            self.active.processed if self.active is not None else 0,
        )
