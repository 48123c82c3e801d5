"""The tasks a worker runs and every transition between their states.

``runtime`` decides *what* changes (a generation's ``plan``); this module does
it, one task at a time, and keeps the worker's invariants:

- an active task processes only after its producer fenced the previous owner
  (``init_transactions``) and its stores restored up to the changelog's last
  stable offset measured after that fence;
- a task leaving active commits (or aborts) its open transaction and closes its
  producer before anything else happens to it;
- a fenced task, or one the error policy stopped, stays down until a newer
  generation assigns it again; a task whose transaction merely aborted, or
  whose start failed, is retried with capped backoff;
- damaged local state is wiped and restored, never served (``state.opening``).

Task states: starting -> restoring -> running (active); standby (standby and
learning); failed, fenced.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from confluent_kafka import (
    Consumer,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from segue.protocol import Role
from segue.protocol.tasks import TaskId, source_partitions
from segue.worker.active import ActiveTask, TaskAborted, TaskFailed, TaskFenced
from segue.worker.fencing import Fenced, Starting, fence_all, in_parallel
from segue.worker.inputs import InputRouter
from segue.worker.kafka import is_fenced
from segue.worker.state.engine import StoreCorrupt, StoreLocked, wipe
from segue.worker.state.layout import StateLayout
from segue.worker.state.opening import open_store
from segue.worker.state.restore import Restorer
from segue.worker.state.store import TaskStore
from segue.worker.topics import ResolvedSub
from segue.worker.topology import SubTopology

log = logging.getLogger(__name__)

Status = Literal["starting", "restoring", "running", "standby", "failed", "fenced"]


@dataclass
class Task:
    name: str
    sub: SubTopology
    resolved: ResolvedSub
    role: Role
    generation: int
    status: Status = "starting"
    stores: dict[str, TaskStore] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)  # store -> changelog end last seen
    active: ActiveTask | None = None
    inputs: list[tuple[str, int]] = field(default_factory=list)
    retry_at: float | None = None
    fence_at: float = 0.0
    spare: Producer | None = None  # a learner's producer, created ahead of its promotion
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    failures: int = 0
    error: str | None = None


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
        self.application_id = application_id
        self.member = member
        self.layout = layout
        self.consumer = consumer
        self.restorer = restorer
        self.producer_factory = producer_factory
        self.exactly_once = exactly_once
        self.commit_interval = commit_interval
        self.fence_delay = fence_delay
        self.tasks: dict[str, Task] = {}
        self.router: InputRouter[Task] = InputRouter(consumer)
        self.processed_total: dict[str, int] = {}
        self.skipped: dict[tuple[str, str], int] = {}
        self.fenced: dict[str, int] = {}
        self.local_offsets: dict[tuple[str, str], int] = {}
        self.wiped = 0

    # -- entering --

    def start(
        self, name: str, role: Role, generation: int, resolved: ResolvedSub, sub: SubTopology
    ) -> None:
        task = Task(name, sub, resolved, role, generation)
        self.tasks[name] = task
        for key in [k for k in self.local_offsets if k[0] == name]:
            del self.local_offsets[key]
        self._enter(task, self.fence_delay)

    def _enter(self, task: Task, fence_delay: float = 0.0) -> None:
        try:
            if len(task.stores) != len(task.sub.stores):
                self._open_stores(task)
            if task.role == "active":
                task.status = "starting"  # fence_pending() takes it from here
                task.fence_at = time.monotonic() + fence_delay
            else:
                self._follow(task)
        except (KafkaException, StoreCorrupt, StoreLocked, TaskAborted, TaskFenced) as exc:
            self.fail(task, exc, retry=True)

    def _watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        marks = self.restorer.consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=10, cached=False
        )
        if marks is None:
            raise KafkaException(f"no watermarks for {topic}[{partition}]")
        return int(marks[0]), int(marks[1])

    def _open_stores(self, task: Task) -> None:
        partition = TaskId.parse(task.name).partition
        for spec in task.sub.stores:
            if spec.name in task.stores:
                continue
            opened = open_store(
                self.layout,
                task=task.name,
                spec=spec,
                changelog=spec.changelog(self.application_id),
                partition=partition,
                watermarks=self._watermarks,
            )
            task.stores[spec.name] = opened.store
            task.ends[spec.name] = opened.end
            self.wiped += int(opened.wiped)

    def _follow(self, task: Task) -> None:
        task.status = "standby"
        self._warm(task)
        for name, store in task.stores.items():
            store.abort()  # a standby's store holds committed changelog data only
            self.restorer.add(task.name, store, target=None, end=task.ends.get(name, 0))

    def fence_pending(self) -> None:
        """Start every active task waiting in ``starting``, all at once (``fencing``).

        A task assigned by a generation waits ``fence_delay`` first: its previous
        owner sees the same generation at about the same time and commits its open
        transaction; fencing it mid-transaction instead aborts that work and costs a
        fixed 500 ms InitProducerId retry in librdkafka (CONCURRENT_TRANSACTIONS).
        Safety does not depend on this delay, only the length of the pause does."""
        now = time.monotonic()
        pending = [
            t
            for t in self.tasks.values()
            if t.status == "starting"
            and t.role == "active"
            and t.active is None
            and t.fence_at <= now
        ]
        if not pending:
            return
        starting = [
            Starting(
                t.name,
                self._take_spare(t),
                {n: (s.changelog, s.partition) for n, s in t.stores.items()},
                self._inputs(t),
                [s.topic(self.application_id) for s in t.sub.sinks],
            )
            for t in pending
        ]
        outcomes = fence_all(
            starting,
            factory=self.producer_factory,
            exactly_once=self.exactly_once,
            watermarks=self._watermarks,
            consumer=self.consumer,
        )
        for task, outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                fenced = isinstance(outcome, KafkaException) and is_fenced(outcome.args[0])
                self.fail(task, outcome, retry=not fenced)
                continue
            try:
                self._activate(task, outcome)
            except (KafkaException, StoreCorrupt, StoreLocked) as exc:
                self.fail(task, exc, retry=True)

    def release(self, names: list[str], timeout: float = 30.0) -> None:
        """Commit the open transactions of tasks about to stop being active, all at
        once, so the new owners' fences find them finished (``fencing.in_parallel``)."""
        actives = [
            t.active
            for n in names
            if (t := self.tasks.get(n)) is not None
            and t.active is not None
            and t.status == "running"
            and t.active.in_txn
        ]
        results = in_parallel([partial(a.commit, timeout) for a in actives])
        for active, exc in zip(actives, results, strict=True):
            if exc is not None:
                log.warning("task %s: final commit failed: %s", active.task_id, exc)
                active.abort()

    def _activate(self, task: Task, fenced: Fenced) -> None:
        producer, ends = fenced.producer, fenced.ends
        task.start_offsets = fenced.offsets
        for store in task.stores.values():
            store.abort()  # start from committed state only
        task.active = ActiveTask(
            task.name,
            task.sub,
            application_id=self.application_id,
            member=self.member,
            producer=producer,
            stores=task.stores,
            consumer=self.consumer,
            exactly_once=self.exactly_once,
            commit_interval=self.commit_interval,
            on_skip=lambda reason: self._count_skip(task.name, reason),
        )
        behind = False
        for name, store in task.stores.items():
            end = ends[name]
            task.ends[name] = end
            if store.offset < end:
                behind = True
                if not self.restorer.retarget(task.name, name, end):
                    self.restorer.add(task.name, store, target=end, end=end)
        if behind:
            task.status = "restoring"
        else:
            self.restorer.remove_task(task.name)
            self._run(task)

    def restored(self, name: str) -> None:
        task = self.tasks.get(name)
        if task is not None and task.status == "restoring" and task.role == "active":
            self._run(task)

    def _inputs(self, task: Task) -> list[tuple[str, int]]:
        task_id = TaskId.parse(task.name)
        inputs: list[tuple[str, int]] = []
        for source in task.sub.sources:
            topic = source.topic(self.application_id)
            available = task.resolved.sources.get(topic, 0)
            inputs += [
                (topic, p) for p in source_partitions(task_id, available, task.resolved.expansion)
            ]
        return inputs

    def reresolve(self, name: str, resolved: ResolvedSub) -> None:
        """The sub-topology's source partitions changed (an expansion in
        ``partition_map``): a running task starts reading its new partitions from
        their committed offsets, keeping its store and everything else."""
        task = self.tasks[name]
        task.resolved = resolved
        if task.status != "running" or task.active is None:
            return
        inputs = self._inputs(task)
        added = [k for k in inputs if k not in task.inputs]
        removed = [k for k in task.inputs if k not in inputs]
        if not added and not removed:
            return
        task.active.commit()  # offsets of partitions it stops reading are committed first
        self.router.unassign(removed)
        if added:
            self.router.assign_committed(task, added)
        task.inputs = inputs
        log.info("task %s now reads %s", name, inputs)

    def _run(self, task: Task) -> None:
        inputs = self._inputs(task)
        # From the offsets committed under the application's group, read after the
        # fence (so stable), else from the beginning.
        self.router.assign(task, inputs, task.start_offsets)
        task.inputs = inputs
        task.status = "running"
        task.failures = 0
        log.info("task %s running (inputs %s)", task.name, inputs)

    # -- leaving --

    def _deactivate(self, task: Task, commit: bool, timeout: float = 30.0) -> None:
        active, task.active = task.active, None
        if active is not None:
            committed = False
            if commit and task.status == "running":
                try:
                    active.commit(timeout)
                    committed = True
                except Exception as exc:  # whatever happened, the transaction is over
                    log.warning("task %s: final commit failed: %s", task.name, exc)
            if not committed:
                active.abort()  # also drops the stores' uncommitted writes
            active.close()
            self.processed_total[task.name] = (
                self.processed_total.get(task.name, 0) + active.processed
            )
        self.router.unassign(task.inputs)
        task.inputs = []
        self.restorer.remove_task(task.name)

    def stop(self, name: str, timeout: float = 30.0) -> None:
        task = self.tasks.pop(name)
        self._deactivate(task, commit=True, timeout=timeout)
        self._take_spare(task, close=True)
        for store_name, store in task.stores.items():
            self.local_offsets[(name, store_name)] = store.offset
            store.close()
        log.info("task %s stopped", name)

    def demote(self, name: str, role: Role) -> None:
        task = self.tasks[name]
        self._deactivate(task, commit=True)
        task.role = role
        self._enter(task)

    def promote(self, name: str, generation: int) -> None:
        task = self.tasks[name]
        task.role = "active"  # its stores keep following until the fence
        task.generation = generation
        self._enter(task, self.fence_delay)

    def relabel(self, name: str, role: Role) -> None:
        task = self.tasks[name]
        task.role = role
        self._warm(task)

    def _warm(self, task: Task) -> None:
        """A learner is about to be promoted: keep its producer created (connected to
        the cluster, not yet initialized), so the fence at promotion takes a few
        milliseconds instead of a cold client start (tens of ms, sometimes 500)."""
        if task.role == "learning" and self.exactly_once and task.status == "standby":
            if task.spare is None:
                task.spare = self.producer_factory(task.name)
        else:
            self._take_spare(task, close=True)

    def _take_spare(self, task: Task, close: bool = False) -> Producer | None:
        spare, task.spare = task.spare, None
        if spare is not None and close:
            spare.close()
            return None
        return spare

    def fail(self, task: Task, exc: BaseException, retry: bool) -> None:
        self._deactivate(task, commit=False)
        self._take_spare(task, close=True)
        fenced = isinstance(exc, TaskFenced)
        task.status = "fenced" if fenced else "failed"
        task.error = str(exc)
        if fenced:
            self.fenced[task.name] = self.fenced.get(task.name, 0) + 1
        if isinstance(exc, StoreCorrupt):
            for store_name, store in task.stores.items():
                store.close()
                wipe(self.layout.store_dir(task.name, store_name))
            task.stores.clear()
            self.wiped += 1
        if retry:
            task.failures += 1
            task.retry_at = time.monotonic() + min(30.0, 0.5 * 2 ** (task.failures - 1))
        log.error("task %s %s: %s%s", task.name, task.status, exc, " (will retry)" if retry else "")

    def retry_due(self, now: float) -> None:
        for task in list(self.tasks.values()):
            if task.status == "failed" and task.retry_at is not None and task.retry_at <= now:
                task.retry_at = None
                self._enter(task)

    # -- the hot path --

    def dispatch(self, messages: list[Message]) -> None:
        for msg in messages:
            if msg.error() is not None:
                log.warning("input consumer: %s", msg.error())
                continue
            task = self.router.owner_of(msg)
            if task is None or task.active is None:
                continue  # revoked after it was fetched
            self._guard(task, task.active.process, msg)

    def commit_due(self, now: float) -> None:
        for task in list(self.tasks.values()):
            if task.active is not None and task.active.commit_due(now):
                self._guard(task, task.active.commit)

    def _guard(self, task: Task, call: Callable[..., None], *args: object) -> None:
        try:
            try:
                call(*args)
            except SystemError as exc:
                # confluent-kafka reports a KafkaException that was pending while it
                # ran a Python callback (a fatal fence during flush()) as a SystemError
                # chained to it: handle the Kafka error itself.
                if isinstance(exc.__cause__, KafkaException):
                    raise exc.__cause__ from exc
                raise
        except (TaskFailed, TaskFenced) as exc:
            self.fail(task, exc, retry=False)
        except KafkaException as exc:
            if is_fenced(exc.args[0]):
                self.fail(task, TaskFenced(f"task {task.name}: {exc.args[0]}"), retry=False)
            else:
                self.fail(task, exc, retry=True)
        except (TaskAborted, StoreCorrupt) as exc:
            self.fail(task, exc, retry=True)

    def _count_skip(self, task: str, reason: str) -> None:
        self.skipped[(task, reason)] = self.skipped.get((task, reason), 0) + 1

    # -- the end --

    def shutdown(self, deadline: float) -> None:
        for name in list(self.tasks):
            remaining = max(1.0, deadline - time.monotonic())
            try:
                self.stop(name, timeout=remaining)
            except Exception as exc:  # one task must not keep the others from closing
                log.error("task %s: shutdown failed: %s", name, exc)

    @property
    def ready(self) -> bool:
        return all(t.status == "running" for t in self.tasks.values() if t.role == "active")
