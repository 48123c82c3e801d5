"""An active task's life from its fence on: activation, input, processing, commits.

``taskset`` decides which tasks fence and when; this module fences them as one
batch (``fencing``), activates each (its stores first restore their changelogs'
tail, measured after the fence, through ``restoring``), routes input records to
the running ones (``inputs``), runs them (``active``), commits what is due, and
ends them: a task leaving active commits or aborts its open transaction and
closes its producer before anything else happens to it. One guard turns what a
running task raises into a failure (``ownership.failure_of``): a fence, or any
fatal producer error, fences the task; an aborted transaction is retried. The
``fail`` callback (``taskset``) takes it from there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from functools import partial

from confluent_kafka import Consumer, KafkaException, Message, Producer

from segue.protocol.reports import TaskErrorReason, TaskState
from segue.worker.active import ActiveTask
from segue.worker.committing import Committing
from segue.worker.failures import Cause, Failure, failure_of
from segue.worker.fencing import Fenced, Starting, fence_all
from segue.worker.guard import FailTask
from segue.worker.hanging import Highs
from segue.worker.inputs import InputRouter, at, source_inputs
from segue.worker.kafka import is_fenced
from segue.worker.logs import about
from segue.worker.ownership import Task
from segue.worker.restoring import Restoration
from segue.worker.state.engine import StoreCorrupt, StoreFull, StoreLocked
from segue.worker.trace import phase

log = logging.getLogger(__name__)


class Processing:
    def __init__(
        self,
        application_id: str,
        member: str,
        *,
        consumer: Consumer,
        restoration: Restoration,
        producer_factory: Callable[[str], Producer],
        exactly_once: bool,
        commit_interval: float,
        fail: FailTask,
        highs: Highs | None = None,
    ) -> None:
        self.application_id = application_id
        self.member = member
        self.consumer = consumer
        self.restoration = restoration
        self.producer_factory = producer_factory
        self.exactly_once = exactly_once
        self.commit_interval = commit_interval
        self.fail = fail
        self.highs = highs
        self.router: InputRouter[Task] = InputRouter(consumer)
        self.committing = Committing(self.fail)
        self.processed_total: dict[str, int] = {}  # by active instances that ended
        self.skipped: dict[tuple[str, str], int] = {}

    @property
    def consuming(self) -> bool:
        return bool(self.router)

    # -- starting --

    def fence_due(self, tasks: Iterable[Task], now: float) -> None:
        """Fence the previous owners of every task waiting in ``starting`` whose
        fence is due, all at once (``fencing``), then activate each one fenced.

        A task assigned by a generation waits ``fence_delay`` first: its previous
        owner sees the same generation at about the same time and commits its open
        transaction; fencing it mid-transaction instead aborts that work and costs a
        fixed 500 ms InitProducerId retry in librdkafka (CONCURRENT_TRANSACTIONS).
        Safety does not depend on this delay, only the length of the pause does."""
        pending = [
            t
            for t in tasks
            if t.state is TaskState.STARTING
            and t.role == "active"
            and t.active is None
            and t.fence_at <= now
        ]
        if not pending:
            return
        starting = [
            Starting(
                t.name,
                self.restoration.take_spare(t),
                {n: (s.changelog, s.partition) for n, s in t.stores.items()},
                self.inputs(t),
                [s.topic(self.application_id) for s in t.sub.sinks],
            )
            for t in pending
        ]
        outcomes = fence_all(
            starting,
            factory=self.producer_factory,
            exactly_once=self.exactly_once,
            watermarks=self.restoration.watermarks,
            consumer=self.consumer,
            highs=self.highs,
        )
        for task, outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, KafkaException) and is_fenced(outcome.args[0]):
                # A fatal error of init_transactions: retrying would fence the new owner.
                cause = Cause(TaskErrorReason.START_FAILED, str(outcome))
                self.fail(task, Failure(cause, retry=False))
            elif isinstance(outcome, BaseException):
                self.fail(task, failure_of(outcome, TaskErrorReason.START_FAILED))
            else:
                try:
                    self._activate(task, outcome)
                except (KafkaException, StoreCorrupt, StoreFull, StoreLocked) as exc:
                    self.fail(task, failure_of(exc, TaskErrorReason.START_FAILED))

    def _activate(self, task: Task, fenced: Fenced) -> None:
        phase(task.name, "measured", " ".join(f"{s}={o}" for s, o in sorted(fenced.ends.items())))
        task.start_offsets = fenced.offsets
        for store in task.stores.values():
            store.abort()  # start from committed state only
        task.active = ActiveTask(
            task.name,
            task.sub,
            application_id=self.application_id,
            member=self.member,
            producer=fenced.producer,
            stores=task.stores,
            consumer=self.consumer,
            exactly_once=self.exactly_once,
            commit_interval=self.commit_interval,
            on_skip=partial(self._count_skip, task.name),
        )
        if self.restoration.restore_to(task, fenced.ends):
            task.move_to(TaskState.RESTORING)
        else:
            self.run(task)

    def run(self, task: Task) -> None:
        """Restored: read input from the offsets committed under the application's
        group, read after the fence (so stable), else from the beginning."""
        inputs = self.inputs(task)
        self.router.assign(task, inputs, task.start_offsets)
        task.inputs = inputs
        task.move_to(TaskState.RUNNING)
        task.failures = 0
        log.info(
            "task %s running (inputs %s, from %s)",
            task.name,
            inputs,
            at(task.start_offsets) or "the beginning",
            extra=about(task.name),
        )
        phase(task.name, "running")

    def inputs(self, task: Task) -> list[tuple[str, int]]:
        return source_inputs(self.application_id, task.name, task.sub, task.resolved)

    def follow_inputs(self, task: Task) -> None:
        """The task's source partitions changed (an expansion): read the new ones from
        their committed offsets, keeping its store and everything else."""
        if task.state is not TaskState.RUNNING or task.active is None:
            return
        inputs = self.inputs(task)
        added = [k for k in inputs if k not in task.inputs]
        removed = [k for k in task.inputs if k not in inputs]
        if not added and not removed:
            return
        # offsets of partitions it stops reading are committed first
        if not self.committing.now([task], resume=True)[task.name] or task.active is None:
            return
        self.router.unassign(removed)
        if added:
            self.router.assign_committed(task, added)
        task.inputs = inputs
        log.info("task %s now reads %s", task.name, inputs, extra=about(task.name))

    # -- leaving --

    def release(self, tasks: list[Task], timeout: float = 30.0) -> None:
        """Commit the open transactions of tasks about to stop being active, all at
        once (each on its thread: ``committing``), so the new owners' fences find them
        finished. One that fails or is stuck is aborted: its next owner reads again
        what it had not committed."""
        running = [t for t in tasks if t.active is not None and t.state is TaskState.RUNNING]
        began = time.monotonic()
        done = self.committing.now(running, resume=False, timeout=timeout)
        took = time.monotonic() - began
        for task in running:
            if task.active is None:
                continue
            if done[task.name]:
                phase(task.name, "released", f"seconds={took:.3f}")
            else:
                log.warning("task %s: final commit failed", task.name, extra=about(task.name))
                task.active.abort()

    def deactivate(self, task: Task, commit: bool, timeout: float = 30.0) -> None:
        """End the task's active instance, if any: commit (if asked, and running) or
        abort its transaction, close its producer; stop its input and restoration."""
        if commit and task.state is TaskState.RUNNING:
            committed = self.committing.now([task], resume=False, timeout=timeout)[task.name]
        else:
            self.committing.settle(task, resume=False, timeout=timeout)
            committed = False  # what is still open is aborted
        active, task.active = task.active, None
        if active is not None:
            if not committed:
                active.abort()  # also drops the stores' uncommitted writes
            if active.committed:  # where its next owner must resume (tests/faults/resumes.py)
                said = at(active.committed)
                log.info(
                    "task %s: input committed up to %s", task.name, said, extra=about(task.name)
                )
            active.close()
            self.processed_total[task.name] = (
                self.processed_total.get(task.name, 0) + active.processed
            )
        self.router.unassign(task.inputs)
        task.inputs = []
        self.restoration.forget(task)

    # -- the hot path --

    def dispatch(self, messages: list[Message]) -> None:
        for msg in messages:
            if msg.error() is not None:
                log.warning("input consumer: %s", msg.error())
                continue
            task = self.router.owner_of(msg)
            if task is not None:  # else revoked after it was fetched
                self.committing.take(task, msg)

    def commit_due(self, tasks: Iterable[Task], now: float) -> None:
        self.committing.due(tasks, now)

    def _count_skip(self, task: str, reason: str) -> None:
        self.skipped[(task, reason)] = self.skipped.get((task, reason), 0) + 1

    def processed(self, tasks: Iterable[Task]) -> dict[str, int]:
        """Records processed as active per task, since the process started."""
        out = dict(self.processed_total)
        for task in tasks:
            if task.active is not None:
                out[task.name] = out.get(task.name, 0) + task.active.processed
        return out
