"""Taking a task down when it cannot run, and bringing it back when it can.

``taskset`` owns the tasks and calls this for every failure (``failures`` says
what each one means): what runs of the task ends (``processing``: its open
transaction committed if asked, else aborted, its producer closed), a learner's
spare producer closes, damaged state is wiped and a full volume's store closed
to be reopened (``restoring``), and the task moves
to ``failed`` or ``fenced`` with its cause (``ownership``). A failed task that
may be retried comes back once its back-off is over, with its sub-topology
resolved afresh against the broker (the missing topic may exist now); a fenced
one, or one its error policy stopped, stays down. An active task's retry fences
whoever holds its transactional id, so it waits until the assignment read afresh
(``freshness``) still gives the task to this worker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping

from confluent_kafka import KafkaException

from segue.protocol.reports import TaskErrorReason, TaskState
from segue.worker.failures import Cause, Failure, blocker, failure_of
from segue.worker.logs import about
from segue.worker.ownership import Task
from segue.worker.restoring import Restoration
from segue.worker.state.engine import StoreCorrupt, StoreFull, StoreLocked
from segue.worker.topics import ResolvedSub
from segue.worker.transaction import TaskAborted, TaskFenced

log = logging.getLogger(__name__)

# The sub-topologies resolved afresh against the broker (``topics.resolve``).
Resolver = Callable[[], Mapping[int, ResolvedSub]]
# True if the assignment was read afresh after this moment (``freshness.Freshness.since``).
Fresh = Callable[[float], bool]
FRESH_WAIT = 0.5  # between two asks whether a read afresh answered
WAITS = (
    "its retry waits until the assignment is read from the API server afresh (a failed "
    "commit can hide a newer owner's fence)"
)
# Ends what runs of a task (``processing.Processing.deactivate``); True: commit.
Deactivate = Callable[[Task, bool], None]


class Recovery:
    def __init__(
        self,
        restoration: Restoration,
        deactivate: Deactivate,
        resolve: Resolver | None,
        fresh: Fresh | None = None,
    ) -> None:
        self.restoration = restoration
        self.deactivate = deactivate
        self.resolve = resolve
        self.fenced: dict[str, int] = {}  # task -> times fenced
        self.fresh = fresh
        self._waiting: set[str] = set()  # tasks whose retry waits for ``fresh``

    def enter(self, task: Task, fence_delay: float = 0.0) -> None:
        """Enter the task's role (``restoring.Restoration.enter``), or fail it."""
        try:
            self.restoration.enter(task, fence_delay)
        except (
            KafkaException,
            StoreCorrupt,
            StoreFull,
            StoreLocked,
            TaskAborted,
            TaskFenced,
        ) as exc:
            self.fail(task, failure_of(exc, TaskErrorReason.START_FAILED))

    def fail(self, task: Task, failure: Failure, commit: bool = False) -> None:
        if task.state is TaskState.FENCED:
            return  # it stays down, as it is, until a newer generation assigns it
        before = task.cause
        self.deactivate(task, commit)
        self.restoration.take_spare(task, close=True)
        cause = failure.cause
        fenced = cause.reason == TaskErrorReason.FENCED
        task.move_to(TaskState.FENCED if fenced else TaskState.FAILED, cause)
        if fenced:
            self.fenced[task.name] = self.fenced.get(task.name, 0) + 1
        if failure.wipe:
            self.restoration.wipe(task)
        elif failure.reopen:
            self.restoration.shut(task)
        task.retry_at = None
        task.failed_at = time.monotonic()
        self._waiting.discard(task.name)  # a new failure: its wait is said anew
        retry = ""
        if failure.retry and not fenced:
            retry = f" (retry in {task.schedule_retry(time.monotonic()):g}s)"
        what = f"{task.state.value} ({cause.reason}): {cause.message}{retry}"
        # A retry that meets the same cause again is not news.
        log.log(logging.INFO if before == cause else logging.ERROR, "task %s %s", task.name, what)

    def retry_due(self, tasks: Iterable[Task], now: float) -> None:
        """Retry the failed tasks whose back-off is over, with their sub-topologies
        resolved afresh: one metadata request for all of them."""
        due = [t for t in tasks if t.retry_due(now) and self._still_owned(t, now)]
        if not due:
            return
        subs = self._fresh_subs()
        for task in due:
            task.retry_at = None
            if subs is None and task.cause is not None:
                self.fail(task, Failure(task.cause, retry=True))  # ask again later
                continue
            task.resolved = (subs or {}).get(task.resolved.id, task.resolved)
            cause = blocker(task.name, task.resolved)
            if cause is not None:
                self.fail(task, Failure(cause, retry=True))
            else:
                log.info(
                    "task %s: retrying (failure %d)",
                    task.name,
                    task.failures,
                    extra=about(task.name),
                )
                self.enter(task)

    def _still_owned(self, task: Task, now: float) -> bool:
        """An active task's retry fences whoever holds its transactional id: it may
        go only once the assignment, read afresh after the failure, still gives the
        task to this worker (``freshness``); until then it waits, and says why."""
        if self.fresh is None or task.role != "active" or self.fresh(task.failed_at):
            self._waiting.discard(task.name)
            return True
        task.retry_at = now + FRESH_WAIT
        if task.name not in self._waiting and task.cause is not None:
            self._waiting.add(task.name)
            # said where the status reads it: the cause's own words, and what it waits for
            waits = Cause(task.cause.reason, f"{task.cause.message}; {WAITS}")
            task.move_to(TaskState.FAILED, waits)
            log.info("task %s: %s", task.name, WAITS, extra=about(task.name))
        return False

    def _fresh_subs(self) -> Mapping[int, ResolvedSub] | None:
        if self.resolve is None:
            return {}
        try:
            return self.resolve()
        except (KafkaException, TimeoutError) as exc:
            log.warning("resolving the topology's topics failed: %s", exc)
            return None
