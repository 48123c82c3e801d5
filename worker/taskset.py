"""The tasks a worker owns: the one object ``runtime`` and ``report`` talk to.

``runtime`` decides *what* changes (a generation's ``plan``) and calls the public
methods here; ``ownership`` holds the task states and their allowed transitions,
``restoring`` a task's local state, ``processing`` an active task from its fence
on. Reports get read-only views (``owned``, ``reports``, ...), never the tasks.
The worker's invariants:

- an active task processes only after its producer fenced the previous owner
  (``init_transactions``) and its stores restored up to the changelog's last
  stable offset measured after that fence;
- a task leaving active commits (or aborts) its open transaction and closes its
  producer before anything else happens to it;
- a fenced task, or one the error policy stopped, stays down until a newer
  generation assigns it again; a task whose transaction merely aborted, or
  whose start failed, is retried with capped backoff;
- damaged local state is wiped and restored, never served (``state.opening``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from confluent_kafka import Consumer, KafkaException, Message, Producer

from segue.worker import metrics
from segue.worker.active import TaskAborted, TaskFenced
from segue.worker.assignment import Role
from segue.worker.ownership import (
    DOWN,
    Failure,
    Task,
    TaskState,
    TaskView,
    failure_of,
    retry_delay,
)
from segue.worker.processing import Processing
from segue.worker.restoring import Restoration
from segue.worker.state.engine import StoreCorrupt, StoreLocked
from segue.worker.state.layout import StateLayout
from segue.worker.state.restore import Restorer
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology

log = logging.getLogger(__name__)


class TaskSet:
    def __init__(
        self,
        application_id: str,
        member: str,
        *,
        layout: StateLayout,
        consumer: Consumer,
        restorer: Restorer,
        producer_factory: Callable[[str], Producer],
        exactly_once: bool,
        commit_interval: float,
        fence_delay: float = 0.0,
    ) -> None:
        self.fence_delay = fence_delay
        self._tasks: dict[str, Task] = {}
        self._fenced: dict[str, int] = {}
        self._restoration = Restoration(
            application_id,
            layout=layout,
            restorer=restorer,
            producer_factory=producer_factory,
            exactly_once=exactly_once,
        )
        self._processing = Processing(
            application_id,
            member,
            consumer=consumer,
            restoration=self._restoration,
            producer_factory=producer_factory,
            exactly_once=exactly_once,
            commit_interval=commit_interval,
            fail=self._fail,
        )
        # Stores on local disk whose task this worker does not own: their offsets.
        self._local_offsets = self._restoration.local_checkpoints()

    # -- queries (copies: callers never hold a task) --

    def owned(self) -> dict[str, Role]:
        return {name: t.role for name, t in self._tasks.items()}

    def down(self) -> list[str]:
        """Tasks that are failed or fenced."""
        return [name for name, t in self._tasks.items() if t.state in DOWN]

    def reports(self) -> list[TaskView]:
        return [t.view() for t in self._tasks.values()]

    def local_offsets(self) -> dict[tuple[str, str], int]:
        return dict(self._local_offsets)

    def changelog_partitions(self) -> dict[tuple[str, int], tuple[str, str]]:
        """(changelog, partition) -> (task, store) of every open store."""
        return {
            (store.changelog, store.partition): (task.name, name)
            for task in self._tasks.values()
            for name, store in task.stores.items()
        }

    def processed(self) -> dict[str, int]:
        return self._processing.processed(self._tasks.values())

    def skipped(self) -> dict[tuple[str, str], int]:
        return dict(self._processing.skipped)

    def fenced(self) -> dict[str, int]:
        return dict(self._fenced)

    @property
    def consuming(self) -> bool:
        """Some active task reads input."""
        return self._processing.consuming

    @property
    def ready(self) -> bool:
        """Every task assigned as active runs."""
        return all(t.state is TaskState.RUNNING for t in self._tasks.values() if t.role == "active")

    # -- a generation's changes --

    def start(
        self, name: str, role: Role, generation: int, resolved: ResolvedSub, sub: SubTopology
    ) -> None:
        task = Task(name, sub, resolved, role, generation)
        self._tasks[name] = task
        for key in [k for k in self._local_offsets if k[0] == name]:
            del self._local_offsets[key]
        self._enter(task, self.fence_delay)

    def stop(self, name: str, timeout: float = 30.0) -> None:
        task = self._tasks.pop(name)
        self._processing.deactivate(task, commit=True, timeout=timeout)
        self._restoration.take_spare(task, close=True)
        for store, offset in self._restoration.close(task).items():
            self._local_offsets[(name, store)] = offset
        log.info("task %s stopped", name)

    def demote(self, name: str, role: Role) -> None:
        task = self._tasks[name]
        self._processing.deactivate(task, commit=True)
        task.role = role
        self._enter(task)

    def promote(self, name: str, generation: int) -> None:
        task = self._tasks[name]
        task.role = "active"  # its stores keep following until the fence
        task.generation = generation
        self._enter(task, self.fence_delay)

    def relabel(self, name: str, role: Role) -> None:
        task = self._tasks[name]
        task.role = role
        self._restoration.warm(task)

    def reresolve(self, name: str, resolved: ResolvedSub) -> None:
        """The task's sub-topology resolved differently (an expansion in
        ``partition_map``): a running task picks up its new source partitions."""
        task = self._tasks[name]
        if resolved == task.resolved:
            return
        task.resolved = resolved
        self._processing.follow_inputs(task)

    def release(self, names: list[str], timeout: float = 30.0) -> None:
        """Commit, in parallel, the open transactions of tasks about to leave active."""
        tasks = [t for n in names if (t := self._tasks.get(n)) is not None]
        self._processing.release(tasks, timeout)

    def fail(self, name: str, exc: BaseException) -> None:
        """Something done to the task outside its own steps failed (a generation's
        step, its restoration): the task is down, retried if that can help."""
        task = self._tasks.get(name)
        if task is not None:
            self._fail(task, failure_of(exc, metrics.REASON_START_FAILED))

    # -- the loop's steps --

    def fence_pending(self) -> None:
        """Fence and start every active task whose fence is due (``processing``)."""
        self._processing.fence_due(self._tasks.values(), time.monotonic())

    def restored(self, name: str) -> None:
        task = self._tasks.get(name)
        if task is not None and task.state is TaskState.RESTORING and task.role == "active":
            try:
                self._processing.run(task)
            except KafkaException as exc:
                self._fail(task, failure_of(exc, metrics.REASON_START_FAILED))

    def dispatch(self, messages: list[Message]) -> None:
        self._processing.dispatch(messages)

    def commit_due(self, now: float) -> None:
        self._processing.commit_due(self._tasks.values(), now)

    def retry_due(self, now: float) -> None:
        """Retry the failed tasks whose back-off is over."""
        for task in list(self._tasks.values()):
            if (
                task.state is TaskState.FAILED
                and task.retry_at is not None
                and task.retry_at <= now
            ):
                task.retry_at = None
                log.info("task %s: retrying (failure %d)", task.name, task.failures)
                self._enter(task)

    def update_ends(self, ends: Mapping[tuple[str, str], int]) -> None:
        """(task, store) -> a changelog end offset just read."""
        for (name, store), end in ends.items():
            task = self._tasks.get(name)
            if task is not None:
                task.ends[store] = max(task.ends.get(store, 0), end)

    def shutdown(self, deadline: float) -> None:
        for name in list(self._tasks):
            remaining = max(1.0, deadline - time.monotonic())
            try:
                self.stop(name, timeout=remaining)
            except Exception as exc:  # one task must not keep the others from closing
                log.error("task %s: shutdown failed: %s", name, exc)

    # -- inside --

    def _enter(self, task: Task, fence_delay: float = 0.0) -> None:
        try:
            self._restoration.enter(task, fence_delay)
        except (KafkaException, StoreCorrupt, StoreLocked, TaskAborted, TaskFenced) as exc:
            self._fail(task, failure_of(exc, metrics.REASON_START_FAILED))

    def _fail(self, task: Task, failure: Failure, commit: bool = False) -> None:
        if task.state is TaskState.FENCED:
            return  # it stays down, as it is, until a newer generation assigns it
        before = task.problem
        self._processing.deactivate(task, commit=commit)
        self._restoration.take_spare(task, close=True)
        problem = failure.problem
        fenced = problem.reason == metrics.REASON_FENCED
        task.move_to(TaskState.FENCED if fenced else TaskState.FAILED, problem)
        if fenced:
            self._fenced[task.name] = self._fenced.get(task.name, 0) + 1
        if failure.wipe:
            self._restoration.wipe(task)
        retry = ""
        task.retry_at = None
        if failure.retry and not fenced:
            task.failures += 1
            delay = retry_delay(task.failures)
            task.retry_at = time.monotonic() + delay
            retry = f" (retry in {delay:g}s)"
        # A retry that meets the same problem again is not news.
        level = logging.INFO if before == problem else logging.ERROR
        log.log(
            level,
            "task %s %s (%s): %s%s",
            task.name,
            task.state.value,
            problem.reason,
            problem.message,
            retry,
        )
