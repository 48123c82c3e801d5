"""The tasks a worker owns: the one object ``runtime`` and ``report`` talk to.

``runtime`` decides *what* changes (a generation's ``plan``) and calls the public
methods here; ``ownership`` holds the task states and their allowed transitions,
``restoring`` a task's local state, ``processing`` an active task from its fence
on, ``recovery`` takes tasks down and brings them back. Reports get read-only
views (``owned``, ``reports``, ``failures``, ...), never the tasks.
The worker's invariants:

- an active task processes only after its producer fenced the previous owner
  (``init_transactions``) and its stores restored up to the changelog's last
  stable offset measured after that fence;
- a task leaving active commits (or aborts) its open transaction and closes its
  producer before anything else happens to it;
- a fenced task, or one the error policy stopped, stays down until a newer
  generation assigns it again; a task that cannot run for any other reason
  (its topics are missing or wrong, its start or its store failed, its
  transaction aborted) stays owned as ``failed`` with its cause and is retried
  with capped back-off, its topics resolved afresh each time;
- damaged local state is wiped and restored, never served (``state.opening``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from confluent_kafka import Consumer, KafkaException, Message, Producer

from segue.protocol import Role
from segue.protocol.reports import TaskErrorReason, TaskState
from segue.worker.confirming import Stable, confirm, confirm_now
from segue.worker.failures import Cause, Failure, blocker, failure_of
from segue.worker.hanging import Highs
from segue.worker.logs import about
from segue.worker.ownership import DOWN, Task, TaskView
from segue.worker.processing import Processing
from segue.worker.recovery import Fresh, Recovery, Resolver
from segue.worker.restoring import Restoration
from segue.worker.state.layout import StateLayout
from segue.worker.state.restore import Restorer
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology
from segue.worker.trace import phase

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
        resolve: Resolver | None = None,
        highs: Highs | None = None,
        stable: Stable | None = None,
    ) -> None:
        self.fence_delay = fence_delay
        self._stable = stable  # last stable offsets, read at shutdown (``confirming``)
        self._tasks: dict[str, Task] = {}
        self._refused: dict[str, tuple[Role, Cause]] = {}
        self._restoration = Restoration(
            application_id,
            layout=layout,
            restorer=restorer,
            producer_factory=producer_factory,
            exactly_once=exactly_once,
        )
        self._recovery = Recovery(
            self._restoration,
            lambda task, commit: self._processing.deactivate(task, commit=commit),
            resolve,
        )
        self._processing = Processing(
            application_id,
            member,
            consumer=consumer,
            restoration=self._restoration,
            producer_factory=producer_factory,
            exactly_once=exactly_once,
            commit_interval=commit_interval,
            fail=self._recovery.fail,
            highs=highs,
        )

    def confirm_with(self, fresh: Fresh) -> None:
        """Active tasks' retries wait for the assignment read afresh (``recovery``)."""
        self._recovery.fresh = fresh

    # -- queries (copies: callers never hold a task) --

    def owned(self) -> dict[str, Role]:
        return {name: t.role for name, t in self._tasks.items()}

    def down(self) -> list[str]:
        """Tasks that are failed or fenced."""
        return [name for name, t in self._tasks.items() if t.state in DOWN]

    def reports(self) -> list[TaskView]:
        return [t.view() for t in self._tasks.values()]

    def causes(self) -> dict[str, Cause]:
        """Every assigned task that cannot run now, and why."""
        out = {name: cause for name, (_, cause) in self._refused.items()}
        out.update({n: t.cause for n, t in self._tasks.items() if t.cause is not None})
        return out

    def local_offsets(self) -> dict[tuple[str, str], int]:
        """(task, store) -> offset of the stores on local disk whose task is not owned."""
        return dict(self._restoration.local_offsets)

    def changelog_partitions(self) -> dict[tuple[str, int], tuple[str, str]]:
        """(changelog, partition) -> (task, store) of every open store."""
        return self._restoration.changelogs(self._tasks.values())

    def processed(self) -> dict[str, int]:
        return self._processing.processed(self._tasks.values())

    def skipped(self) -> dict[tuple[str, str], int]:
        return dict(self._processing.skipped)

    def fenced(self) -> dict[str, int]:
        return dict(self._recovery.fenced)

    def wipes(self) -> dict[tuple[str, str], int]:
        return dict(self._restoration.wiped)

    @property
    def consuming(self) -> bool:
        """Some active task reads input."""
        return self._processing.consuming

    @property
    def settling(self) -> bool:
        """Some active task just taken over has not committed yet: it restores its
        changelog's tail, or its first transaction is open. (One waiting for its fence
        does not count: its new producer warms up meanwhile.)"""
        return any(
            t.role == "active"
            and (
                t.state is TaskState.RESTORING
                or (t.active is not None and t.active.in_txn and not t.active.commits)
            )
            for t in self._tasks.values()
        )

    @property
    def ready(self) -> bool:
        """Every task assigned as active runs (a refused one does not)."""
        return not any(role == "active" for role, _ in self._refused.values()) and all(
            t.state is TaskState.RUNNING for t in self._tasks.values() if t.role == "active"
        )

    # -- a generation's changes --

    def refuse(self, refused: Mapping[str, tuple[Role, Cause]]) -> None:
        """The generation's tasks this worker cannot own at all (unknown ids)."""
        self._refused = dict(refused)

    def start(
        self, name: str, role: Role, generation: int, resolved: ResolvedSub, sub: SubTopology
    ) -> None:
        task = Task(name, sub, resolved, role, generation)
        self._tasks[name] = task
        self._restoration.claim(name)
        cause = blocker(name, resolved)
        if cause is not None:
            self._recovery.fail(task, Failure(cause, retry=True))
        else:
            self._recovery.enter(task, self.fence_delay)

    def stop(self, name: str, timeout: float = 30.0) -> None:
        task = self._tasks.pop(name)
        self._processing.deactivate(task, commit=True, timeout=timeout)
        self._restoration.take_spare(task, close=True)
        self._restoration.close(task)
        log.info("task %s stopped", name, extra=about(name))
        if task.role == "active":
            phase(name, "left", "stopped")

    def demote(self, name: str, role: Role) -> None:
        task = self._tasks[name]
        self._processing.deactivate(task, commit=True)
        phase(name, "left", f"demoted to {role}")
        task.role = role
        self._recovery.enter(task)

    def promote(self, name: str, generation: int) -> None:
        task = self._tasks[name]
        task.role = "active"  # its stores keep following until the fence
        task.generation = generation
        self._recovery.enter(task, self.fence_delay)

    def relabel(self, name: str, role: Role) -> None:
        task = self._tasks[name]
        task.role = role
        self._restoration.warm(task)

    def reresolve(self, name: str, resolved: ResolvedSub) -> None:
        """The task's sub-topology resolved differently: a running task picks up the
        source partitions of an expansion; a task whose topics went wrong goes down
        (failed, retried)."""
        task = self._tasks[name]
        if resolved == task.resolved:
            return
        task.resolved = resolved
        cause = blocker(name, resolved)
        if cause is not None:
            if task.state not in DOWN:
                self._recovery.fail(task, Failure(cause, retry=True), commit=True)
        else:
            self._processing.follow_inputs(task)

    def let_go(self, roles: Mapping[str, Role]) -> None:
        """A new generation's ``roles`` for this member: stop or demote, before anything
        else, the active tasks it no longer has as active here. Letting go waits on the
        brokers only for the final commit and ``confirming.LAST_COMMIT_READ`` (2 s at
        most) after it, while resolving the generation's topics can wait a whole
        metadata timeout with a broker away, and the new owners fence meanwhile: the
        old owner must not run on (a rolling restart showed two owners for 10 s)."""
        leaving = [n for n, t in self._tasks.items() if t.role == "active" and n not in roles]
        demoted = {
            n: role
            for n, t in self._tasks.items()
            if t.role == "active" and (role := roles.get(n)) not in (None, "active")
        }
        self.release([*leaving, *demoted])
        for name in leaving:
            self._let_go_of(name, self.stop, name)
        for name, role in demoted.items():
            self._let_go_of(name, self.demote, name, role)

    def _let_go_of(self, name: str, step: Callable[..., None], *args: object) -> None:
        try:
            step(*args)
        except Exception as exc:  # that task's failure, not the generation's
            log.exception("task %s: letting it go failed", name, extra=about(name))
            self.fail(name, exc)

    def release(self, names: list[str], timeout: float = 30.0) -> None:
        """Commit, in parallel, the open transactions of tasks about to leave active,
        then write to disk what Kafka shows stable (``confirming.confirm_now``), so the
        stores they leave behind hold their last commit."""
        tasks = [t for n in names if (t := self._tasks.get(n)) is not None]
        if tasks:
            self._processing.release(tasks, timeout)
            if self._stable is not None:
                confirm_now(tasks, self._stable)

    def fail(self, name: str, exc: BaseException) -> None:
        """Something done to the task outside its own steps failed (a generation's
        step, its restoration): the task is down, retried if that can help."""
        task = self._tasks.get(name)
        if task is not None:
            self._recovery.fail(task, failure_of(exc, TaskErrorReason.START_FAILED))

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
                self._recovery.fail(task, failure_of(exc, TaskErrorReason.START_FAILED))

    def dispatch(self, messages: list[Message]) -> None:
        self._processing.dispatch(messages)

    def commit_due(self, now: float) -> None:
        self._processing.commit_due(self._tasks.values(), now)

    def retry_due(self, now: float) -> None:
        """Retry the failed tasks whose back-off is over (``recovery``)."""
        self._recovery.retry_due(self._tasks.values(), now)

    def update_ends(self, ends: Mapping[tuple[str, str], int]) -> None:
        """(task, store) -> a changelog end offset just read: also what an active's
        stores may now write to disk (``state.store.TaskStore.confirm``)."""
        self._restoration.update_ends(self._tasks, ends)
        for name, exc in confirm(self._tasks, ends).items():
            self.fail(name, exc)

    def shutdown(self, deadline: float) -> None:
        """Commit the running tasks at once, write to disk what Kafka then shows
        stable (``confirming``), then stop each task."""
        running = [n for n, t in self._tasks.items() if t.state is TaskState.RUNNING]
        self.release(running, max(1.0, deadline - time.monotonic()))
        for name in list(self._tasks):
            remaining = max(1.0, deadline - time.monotonic())
            try:
                self.stop(name, timeout=remaining)
            except Exception as exc:  # one task must not keep the others from closing
                log.error("task %s: shutdown failed: %s", name, exc, extra=about(name))
