"""The worker's main loop: apply generations, restore, process, commit, report.

One thread does all Kafka and store work, so task state needs no locks: it
applies the newest assignment the watcher (``watch``) delivered, polls the
restore consumer (``state.restore``), polls the input consumer and dispatches
records to active tasks, commits the transactions that are due, retries failed
tasks, and publishes a metrics snapshot (``report``, ``metrics``). ``diff`` says
which tasks change; ``taskset`` changes them, through its public methods only;
``topics`` resolves the topology against the broker, for each generation and
for each retry of a task that could not run. On stop (SIGTERM) it finishes every
open transaction, checkpoints and closes within the shutdown timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException

from segue.protocol import AssignmentDocument, Role
from segue.protocol.reports import AssignmentErrorReason
from segue.protocol.tasks import Expansion, TaskId
from segue.worker import closing, kafka, report
from segue.worker.clients import make_clients
from segue.worker.config import WorkerConfig
from segue.worker.diff import diff
from segue.worker.ends import EndsReader
from segue.worker.failures import Cause, refusal_of, unapplied
from segue.worker.logs import about
from segue.worker.metrics import WorkerMetrics
from segue.worker.state.layout import StateLayout
from segue.worker.state.restore import RestoreError, Restorer
from segue.worker.taskset import TaskSet
from segue.worker.topics import Resolution, ResolvedSub, first_topics, resolve
from segue.worker.topology import SubTopology, Topology
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)

PROCESS_BATCH = 500
REPORT_EVERY = 0.5
ENDS_EVERY = 2.0
SIZES_EVERY = 5.0


class Worker:
    def __init__(self, config: WorkerConfig, topology: Topology, metrics: WorkerMetrics) -> None:
        self.config = config
        self.topology = topology
        self.metrics = metrics
        self.application_id = config.application_id or topology.application_id
        self.member = config.member
        self.clients = make_clients(config, self.application_id, metrics)
        self.admin = self.clients.admin
        consumer = self.clients.consumer
        self.restorer = Restorer(
            self.clients.restore_consumer,
            config.restore_batch,
            standby_rate=config.standby_restore_rate,
        )
        self.layout = StateLayout(config.state_dir, self.application_id)
        self.ends = EndsReader(self.admin)
        self.tasks = TaskSet(
            self.application_id,
            self.member,
            layout=self.layout,
            consumer=consumer,
            restorer=self.restorer,
            producer_factory=self.clients.producer_for,
            exactly_once=config.processing_guarantee == "exactly_once",
            commit_interval=config.commit_interval_ms / 1000.0,
            fence_delay=config.fence_delay_ms / 1000.0,
            resolve=self._resolve_now,
            highs=self.admin.high_watermarks,
            stable=self.admin.end_offsets,
        )
        self.consumer = consumer
        self.generation: int | None = None
        self._expansions: Mapping[int, Expansion] = {}  # the applied generation's
        self._pending: AssignmentDocument | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.stopping = threading.Event()
        self.sizes: dict[str, int] = {}
        # Standby and learner copies still to start, one a turn, none while a new active
        # restores or opens its first transaction: it must not wait behind their stores.
        self._deferred: list[tuple[str, Role, int, ResolvedSub, SubTopology]] = []

    # -- input from the watcher thread --

    def offer(self, document: AssignmentDocument) -> None:
        with self._lock:
            if self._pending is None or document.generation > self._pending.generation:
                self._pending = document
        self._wake.set()

    def count_error(self, reason: str) -> None:
        self.metrics.assignment_errors.labels(reason=reason).inc()

    def stop(self) -> None:
        self.stopping.set()
        self._wake.set()

    # -- applying a generation --

    def _take_pending(self) -> AssignmentDocument | None:
        with self._lock:
            document, self._pending = self._pending, None
        return document

    def _apply(self, doc: AssignmentDocument) -> None:
        if self.generation is not None and doc.generation <= self.generation:
            return  # a stale event after a reconnect
        if doc.application_id != self.application_id:
            log.error(
                "generation %d is for application %r, not %r: ignored",
                doc.generation,
                doc.application_id,
                self.application_id,
            )
            self.count_error(AssignmentErrorReason.APPLICATION_MISMATCH)
            return
        roles, conflicts = doc.roles_of(self.member)
        self.tasks.let_go(roles)  # first: resolving below may wait on the brokers
        expansions = doc.expansions()
        resolution = self._resolve(expansions)
        for task in conflicts:
            log.error(
                "generation %d lists task %s in two roles for %s", doc.generation, task, self.member
            )
            self.count_error(AssignmentErrorReason.CONFLICTING_ROLES)
        # A task of the topology is kept even if it cannot run now (its topics are
        # missing or wrong): the task set reports it and retries it. Only ids that
        # name no task of the topology are refused.
        desired: dict[str, Role] = {}
        refused: dict[str, tuple[Role, Cause]] = {}
        for task, role in roles.items():
            reason, refusal = refusal_of(task, resolution)
            if reason is not None:
                self.count_error(reason)
            if refusal is None:
                desired[task] = role
            else:
                log.error("task %s: %s", task, refusal.message, extra=about(task))
                refused[task] = (role, refusal)
        for name in self.tasks.down():
            if name in desired:
                self.tasks.stop(name)  # it comes back: recreated from scratch
        self._deferred.clear()  # copies of an older generation not started yet: diffed again
        changes = diff(self.tasks.owned(), desired)
        said = about(generation=doc.generation)
        log.info("applying generation %d: %s", doc.generation, changes, extra=said)
        began = time.monotonic()
        self.tasks.release([*changes.stop, *changes.demote])
        self.tasks.refuse(refused)
        for name in changes.stop:
            self._transition(name, self.tasks.stop, name)
        for name, role in changes.demote.items():
            self._transition(name, self.tasks.demote, name, role)
        for name, role in changes.relabel.items():
            self._transition(name, self.tasks.relabel, name, role)
        for name in changes.promote:
            self._transition(name, self.tasks.promote, name, doc.generation)
        for name, role in changes.start.items():
            task_id = TaskId.parse(name)
            sub = self.topology.get(task_id.subtopology)
            resolved = resolution.subs[task_id.subtopology]
            start = (name, role, doc.generation, resolved, sub)
            if role == "active":
                self._transition(name, self.tasks.start, *start)
            else:
                self._deferred.append(start)
        for name in self.tasks.owned():
            now_resolved = resolution.subs.get(TaskId.parse(name).subtopology)
            if now_resolved is not None:
                self._transition(name, self.tasks.reresolve, name, now_resolved)
        self.tasks.fence_pending()
        self.generation = doc.generation
        self._expansions = expansions
        took = time.monotonic() - began
        log.info("generation %d applied in %.3fs", doc.generation, took, extra=said)

    def _transition(self, name: str, step: Callable[..., None], *args: object) -> None:
        """One task's step of a generation; its failure is that task's, not the generation's."""
        try:
            step(*args)
        except Exception as exc:
            log.exception("task %s: applying the generation failed", name, extra=about(name))
            self.tasks.fail(name, exc)

    def _resolve_now(self) -> Mapping[int, ResolvedSub]:
        """The sub-topologies as the broker's topics are now (a retry asks)."""
        return self._resolve(self._expansions).subs

    def _resolve(self, expansions: Mapping[int, Expansion]) -> Resolution:
        app, counts = self.application_id, self.admin.partition_counts
        resolution = resolve(self.topology, app, counts(), expansions)
        if resolution.create:
            self.admin.create(resolution.create)
            resolution = resolve(self.topology, app, counts(), expansions)
        return resolution

    def _make_first_topics(self) -> None:
        try:  # briefly: a broker that does not answer is the generation's to wait out
            counts = self.admin.partition_counts(timeout=2.0)
            self.admin.create(first_topics(self.topology, self.application_id, counts), 5.0)
        except KafkaException as exc:  # the first generation makes them, and says why not
            log.warning("internal topics not made at start: %s", self.admin.why(exc))

    # -- the loop --

    def run(self) -> None:
        self._make_first_topics()
        last_report = last_ends = last_sizes = 0.0
        while not self.stopping.is_set():
            document = self._take_pending()
            if document is not None:
                try:
                    self._apply(document)
                except KafkaException as exc:
                    why = self.admin.why(exc)
                    log.error(
                        "generation %d not applied yet (%s); retrying", document.generation, why
                    )
                    roles, _ = document.roles_of(self.member)
                    self.tasks.refuse(
                        unapplied(roles, self.tasks.owned(), document.generation, why)
                    )
                    self.offer(document)
                    self.stopping.wait(1.0)
            busy = self._step()
            now = time.monotonic()
            self.tasks.commit_due(now)
            self.tasks.retry_due(now)
            self.tasks.fence_pending()
            if self._deferred and not self.tasks.settling:
                name, *start = self._deferred.pop(0)
                self._transition(name, self.tasks.start, name, *start)
            if now - last_ends >= ENDS_EVERY:
                last_ends = now
                self.ends.step(self.tasks, self.restorer)
            if now - last_sizes >= SIZES_EVERY:
                last_sizes = now
                self.sizes = report.state_sizes(self.tasks, self.layout)
            if now - last_report >= REPORT_EVERY:
                last_report = now
                self.metrics.publish(report.snapshot(self))
            if not busy:
                self._wake.wait(0.05)
                self._wake.clear()
        self._shutdown()

    def _step(self) -> bool:
        """One restore poll and one input poll; True if either had work."""
        self.clients.renew_lost()  # a consumer librdkafka left with no broker (renewing)
        running = self.tasks.consuming
        busy = False
        if self.restorer.busy:
            try:
                done = self.restorer.poll(0.0 if running else 0.05)
            except RestoreError as exc:
                self.tasks.fail(exc.task, exc)
                done = []
            failed = self.restorer.take_failed()
            for name, error in failed.items():
                self.tasks.fail(name, error)
            for name in done:
                if name not in failed:
                    self.tasks.restored(name)
            busy = True
        if running:
            # consume() waits for a full batch or the timeout: keep it short, it is
            # latency added to every record when input is slow.
            timeout = 0.0 if self.restorer.busy else 0.01
            with bounded("consume", timeout):
                messages = self.consumer.consume(PROCESS_BATCH, timeout)
            self.tasks.dispatch(messages)
            busy = True
        return busy

    def _shutdown(self) -> None:
        deadline = time.monotonic() + self.config.shutdown_timeout
        log.info(
            "stopping: committing open transactions and closing %d tasks", len(self.tasks.owned())
        )
        self.tasks.shutdown(deadline)
        if left := closing.drain(deadline):
            log.warning("stopping with %d producer(s) still closing", left)
        self.metrics.publish(report.snapshot(self))
        for consumer in (self.consumer, self.restorer.consumer):
            try:
                with bounded("close", kafka.CLOSE_TIMEOUT):  # takes no timeout
                    consumer.close()
            except (KafkaException, RuntimeError) as exc:
                log.debug("closing a consumer: %s", exc)
        log.info("stopped")
