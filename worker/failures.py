"""Why a task cannot run, and what to do about it: pure, no I/O.

A :class:`Cause` is a reason word (the contract's ``TaskErrorReason``, what the
``segue_task_error`` gauge reports) and a message. :func:`failure_of` says what
an exception means for the task it stopped (is it retried? is its state wiped?),
:func:`blocker` why the task cannot run with its sub-topology's topics as
``topics.resolve`` found them, and :func:`retry_delay` the capped exponential
back-off between retries. ``taskset`` acts on them; ``ownership`` keeps the
cause of a task that is down.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from segue.protocol import Role
from segue.protocol.reports import AssignmentErrorReason, TaskErrorReason
from segue.protocol.tasks import TaskId
from segue.worker import metrics
from segue.worker.active import TaskFailed
from segue.worker.state.engine import StoreCorrupt, StoreFull, StoreLocked
from segue.worker.state.restore import RestoreError
from segue.worker.topics import Resolution, ResolvedSub
from segue.worker.transaction import TaskAborted, TaskFenced

FIRST_RETRY = 0.5  # seconds before the first retry; doubles per failure
MAX_RETRY = 10.0  # a fixed cause is picked up within 10 s (issue 14: resume in 15 s)


def retry_delay(failures: int) -> float:
    """Seconds before retrying a task that failed ``failures`` times in a row."""
    return min(MAX_RETRY, FIRST_RETRY * 2.0 ** min(max(failures, 1) - 1, 32))


@dataclass(frozen=True)
class Cause:
    """Why a task cannot run, as ``segue_task_error`` reports it (the contract's words)."""

    reason: TaskErrorReason
    message: str


@dataclass(frozen=True)
class Failure:
    cause: Cause
    retry: bool
    wipe: bool = False  # the local state cannot be trusted
    reopen: bool = False  # the state is fine, its open handle is not: close, keep the files


def failure_of(exc: BaseException, default: TaskErrorReason) -> Failure:
    """What an exception means for the task it stopped; ``default`` is the reason of errors
    that are none of the known kinds (``StartFailed`` while starting, ...)."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, TaskFenced):
        return Failure(Cause(TaskErrorReason.FENCED, message), retry=False)
    if isinstance(exc, TaskFailed):
        return Failure(Cause(TaskErrorReason.RECORD_FAILED, message), retry=False)
    if isinstance(exc, StoreFull):
        # RocksDB refuses every write after one failed, until reopened.
        return Failure(Cause(TaskErrorReason.STORE_FULL, message), retry=True, reopen=True)
    if isinstance(exc, StoreCorrupt):
        return Failure(Cause(TaskErrorReason.STORE_FAILED, message), retry=True, wipe=True)
    if isinstance(exc, (StoreLocked, RestoreError)):
        return Failure(Cause(TaskErrorReason.STORE_FAILED, message), retry=True)
    if isinstance(exc, TaskAborted):
        return Failure(Cause(TaskErrorReason.TRANSACTION_ABORTED, message), retry=True)
    return Failure(Cause(default, message), retry=True)


def blocker(name: str, resolved: ResolvedSub) -> Cause | None:
    """Why the task cannot run with its sub-topology's topics as they are, if it cannot."""
    if resolved.error is not None:
        reason = metrics.TOPIC_REASONS.get(resolved.error.reason, TaskErrorReason.START_FAILED)
        return Cause(reason, f"sub-topology {resolved.id}: {resolved.error.message}")
    partition = TaskId.parse(name).partition
    if partition >= resolved.tasks:
        return Cause(
            TaskErrorReason.TASK_OUT_OF_RANGE,
            f"sub-topology {resolved.id} has {resolved.tasks} tasks (its source topics' "
            f"partitions), not a task {name}",
        )
    return None


def refusal_of(task: str, resolution: Resolution) -> tuple[str | None, Cause | None]:
    """The assignment error ``task`` counts as, if any, and why it is refused, if it
    names no task of the topology (a task of it that cannot run now is kept, failed, and
    the task set reports it)."""
    try:
        task_id = TaskId.parse(task)
    except ValueError as exc:
        return AssignmentErrorReason.UNKNOWN_TASK, Cause(TaskErrorReason.UNKNOWN_TASK, str(exc))
    sub = resolution.subs.get(task_id.subtopology)
    if sub is None:
        message = f"the topology has no sub-topology {task_id.subtopology}"
        return AssignmentErrorReason.UNKNOWN_TASK, Cause(TaskErrorReason.UNKNOWN_TASK, message)
    if sub.error is not None:
        return sub.error.reason, None
    if task_id.partition >= sub.tasks:
        return AssignmentErrorReason.UNKNOWN_TASK, None
    return None, None


def unapplied(
    roles: Mapping[str, Role], owned: Iterable[str], generation: int, why: str
) -> dict[str, tuple[Role, Cause]]:
    """The tasks of a generation the worker could not apply (its topics could not be
    read: the brokers away, or refusing its login), other than those it already runs:
    reported as refused with ``why`` until the generation applies, so the status says
    what holds them instead of showing members merely not ready."""
    running = set(owned)
    cause = Cause(TaskErrorReason.START_FAILED, f"generation {generation} not applied: {why}")
    return {task: (role, cause) for task, role in roles.items() if task not in running}
