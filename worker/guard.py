"""What a running task raises, turned into its failure: one guard for every step.

``processing`` runs each step of an active task (a record, a commit's parts, a
commit's outcome handed back by its thread: ``committing``) through :func:`guarded`:
a fence, or any fatal producer error, fences the task; an aborted transaction, a bad
record under the ``stop`` policy or a store error fails it (``failures.failure_of``
says whether it is retried). ``fail`` (``taskset``) takes it from there.
"""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import KafkaException

from segue.protocol.reports import TaskErrorReason
from segue.worker.active import TaskFailed
from segue.worker.failures import Failure, failure_of
from segue.worker.kafka import is_fenced
from segue.worker.ownership import Task
from segue.worker.state.engine import StoreCorrupt, StoreFull
from segue.worker.transaction import TaskAborted, TaskFenced

FailTask = Callable[[Task, Failure], None]


def guarded(task: Task, fail: FailTask, call: Callable[..., None], *args: object) -> bool:
    """Run one step of ``task``; whatever it raises fails the task. True if it ran."""
    try:
        try:
            call(*args)
        except SystemError as exc:
            # confluent-kafka reports a KafkaException that was pending while it
            # ran a Python callback (a fatal fence during flush()) as a SystemError
            # chained to it: handle the Kafka error itself.
            if isinstance(exc.__cause__, KafkaException):
                raise exc.__cause__ from exc
            # Sometimes it loses the Kafka error on the way ("returned NULL without
            # setting an exception"): seen only when a fatal fence lands mid-flush.
            # The producer is unusable either way; taking the task down until a
            # generation assigns it again is the safe reading (a retry would fence
            # the owner that fenced us).
            raise TaskFenced(
                f"task {task.name}: the producer failed fatally ({exc}); treated as fenced"
            ) from exc
    except KafkaException as exc:
        if is_fenced(exc.args[0]):
            fenced = TaskFenced(f"task {task.name}: {exc.args[0]}")
            fail(task, failure_of(fenced, TaskErrorReason.FENCED))
        else:
            fail(task, failure_of(exc, TaskErrorReason.TRANSACTION_ABORTED))
    except (TaskFailed, TaskFenced, TaskAborted, StoreCorrupt, StoreFull) as exc:
        fail(task, failure_of(exc, TaskErrorReason.TRANSACTION_ABORTED))
    else:
        return True
    return False


def reraise(error: BaseException) -> None:
    """A step that raises what a commit's thread raised, for :func:`guarded`."""
    raise error
