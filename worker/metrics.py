"""What the worker reports, for the operator to scrape (docs/protocol.md).

The main loop owns the task state and publishes an immutable :class:`Snapshot`
a few times a second; a custom collector renders the last snapshot on each
scrape, so the HTTP thread never reads state the main loop is changing, and a
task that is gone disappears from the gauges at once. Counters kept by the
snapshot (records processed, restored, skipped) are cumulative for the process.
One explicit registry per process; ``http`` serves it.

This module is also where the names the operator parses are spelled: the
``segue_task_error`` gauge and its reason words (``ownership`` and ``runtime``
attach them to the tasks that cannot run).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from segue.protocol import reports as r
from segue.protocol.document import ROLES
from segue.protocol.reports import (
    REPORTED_STATES,
    TASK_ERROR,
    TASK_ERROR_LABELS,
    TASK_ERROR_MESSAGE_MAX,
    AssignmentErrorReason,
    TaskErrorReason,
)
from segue.worker.watchdog import WATCHDOG, Watchdog

# ``topics.SubError.reason`` (also the segue_assignment_errors_total reason) -> reason word.
TOPIC_REASONS: Mapping[str, TaskErrorReason] = {
    AssignmentErrorReason.MISSING_TOPIC: TaskErrorReason.TOPIC_MISSING,
    AssignmentErrorReason.COPARTITIONING: TaskErrorReason.NOT_COPARTITIONED,
    AssignmentErrorReason.CHANGELOG_PARTITIONS: TaskErrorReason.PARTITION_MISMATCH,
}


@dataclass(frozen=True)
class StoreReport:
    store: str
    restored_offset: int  # the next changelog offset the local store will read
    end_offset: int  # the changelog's end offset as last seen
    changelog_records: int = 0  # changelog records applied since the store was created empty
    changelog_bytes: int = 0  # their key+value bytes


@dataclass(frozen=True)
class TaskReport:
    task: str
    role: str
    state: str  # starting, restoring, running, standby, failed, fenced
    stores: tuple[StoreReport, ...]
    lag: int
    state_bytes: int


@dataclass(frozen=True)
class TaskErrorReport:
    task: str
    reason: TaskErrorReason
    message: str


def error_message(text: str) -> str:
    """One line of at most TASK_ERROR_MESSAGE_MAX characters."""
    line = " ".join(text.split())
    if len(line) <= TASK_ERROR_MESSAGE_MAX:
        return line
    return line[: TASK_ERROR_MESSAGE_MAX - 3] + "..."


@dataclass(frozen=True)
class Snapshot:
    generation: int | None = None
    tasks: tuple[TaskReport, ...] = ()
    local_offsets: dict[tuple[str, str], int] = field(default_factory=dict)
    local_bytes: dict[str, int] = field(default_factory=dict)
    processed: dict[str, int] = field(default_factory=dict)
    restored_records: dict[tuple[str, str], int] = field(default_factory=dict)
    restored_bytes: dict[tuple[str, str], int] = field(default_factory=dict)
    skipped: dict[tuple[str, str], int] = field(default_factory=dict)
    fenced: dict[str, int] = field(default_factory=dict)
    wipes: dict[tuple[str, str], int] = field(default_factory=dict)
    errors: tuple[TaskErrorReport, ...] = ()
    ready: bool = False


class _SnapshotCollector(Collector):
    def __init__(self, metrics: WorkerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        snap = self._metrics.snapshot
        gen = GaugeMetricFamily(r.GENERATION, "The assignment generation applied")
        if snap.generation is not None:
            gen.add_metric([], snap.generation)
        yield gen
        role = GaugeMetricFamily(
            r.TASK_ROLE, "1 for the role the task runs in", labels=["task", "role"]
        )
        state = GaugeMetricFamily(
            r.TASK_STATE, "1 for the task's current state", labels=["task", "state"]
        )
        restored = GaugeMetricFamily(
            r.RESTORED_OFFSET,
            "The next changelog offset the local store will read",
            labels=["task", "store"],
        )
        end = GaugeMetricFamily(
            r.CHANGELOG_END_OFFSET,
            "The changelog's end offset (read_committed) as last seen by the worker",
            labels=["task", "store"],
        )
        held = GaugeMetricFamily(
            r.CHANGELOG_RECORDS,
            "Changelog records the local store applied since it was created empty "
            "(restored or written; kept in its checkpoint)",
            labels=["task", "store"],
        )
        held_bytes = GaugeMetricFamily(
            r.CHANGELOG_BYTES,
            "Key+value bytes of the changelog records the store applied since it was created empty",
            labels=["task", "store"],
        )
        lag = GaugeMetricFamily(
            r.TASK_LAG, "Changelog records behind, summed over stores", labels=["task"]
        )
        size = GaugeMetricFamily(r.STATE_BYTES, "Bytes of local state", labels=["task"])
        for t in snap.tasks:
            for role_name in ROLES:
                role.add_metric([t.task, role_name], 1.0 if t.role == role_name else 0.0)
            for s in REPORTED_STATES:
                state.add_metric([t.task, s], 1.0 if t.state == s else 0.0)
            for st in t.stores:
                restored.add_metric([t.task, st.store], st.restored_offset)
                end.add_metric([t.task, st.store], st.end_offset)
                held.add_metric([t.task, st.store], st.changelog_records)
                held_bytes.add_metric([t.task, st.store], st.changelog_bytes)
            lag.add_metric([t.task], t.lag)
            size.add_metric([t.task], t.state_bytes)
        local = GaugeMetricFamily(
            r.LOCAL_OFFSET,
            "Checkpointed changelog offset of a store on local disk whose task is not assigned",
            labels=["task", "store"],
        )
        for (task, store), offset in sorted(snap.local_offsets.items()):
            local.add_metric([task, store], offset)
        for task, nbytes in sorted(snap.local_bytes.items()):
            size.add_metric([task], nbytes)
        error = GaugeMetricFamily(
            TASK_ERROR, "1 for each assigned task that cannot run now", labels=TASK_ERROR_LABELS
        )
        for e in snap.errors:
            error.add_metric([e.task, e.reason, error_message(e.message)], 1.0)
        yield from (role, state, restored, end, held, held_bytes, lag, local, size, error)
        yield _counter(
            r.RECORDS_PROCESSED,
            "Input records processed as active",
            ["task"],
            {(k,): v for k, v in snap.processed.items()},
        )
        yield _counter(
            r.RECORDS_RESTORED,
            "Changelog records restored into local stores",
            ["task", "store"],
            dict(snap.restored_records.items()),
        )
        yield _counter(
            r.BYTES_RESTORED,
            "Key+value bytes of the changelog records restored into local stores",
            ["task", "store"],
            dict(snap.restored_bytes.items()),
        )
        yield _counter(
            r.RECORDS_SKIPPED,
            "Bad records skipped by the error policy",
            ["task", "reason"],
            dict(snap.skipped.items()),
        )
        yield _counter(
            r.TASK_FENCED,
            "Times a task was fenced by a newer owner",
            ["task"],
            {(k,): v for k, v in snap.fenced.items()},
        )
        yield _counter(
            r.STORE_WIPES,
            "Local stores wiped because their state could not be trusted (then restored)",
            ["task", "store"],
            dict(snap.wipes.items()),
        )
        ready = GaugeMetricFamily(r.READY, "1 when every active task is running")
        ready.add_metric([], 1.0 if snap.ready and self._metrics.stuck() is None else 0.0)
        yield ready
        yield _counter(
            r.KAFKA_CALL_OVERRUNS,
            "Blocking Kafka calls that ran past their bound (their timeout plus a grace)",
            ["call"],
            {(call,): n for call, n in self._metrics.watchdog.overruns.copy().items()},
        )
        yield _counter(
            r.KAFKA_CALLS_ABANDONED,
            "Stuck Kafka calls of a task's commit left to their thread; the task was fenced "
            "anew by its retry instead of the worker exiting",
            ["call"],
            {(call,): n for call, n in self._metrics.watchdog.abandoned.copy().items()},
        )


def _counter(
    name: str, doc: str, labels: list[str], values: dict[tuple[str, ...], int]
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=labels)
    for key, value in sorted(values.items()):
        family.add_metric(list(key), value)
    return family


class WorkerMetrics:
    def __init__(self, watchdog: Watchdog = WATCHDOG) -> None:
        self.watchdog = watchdog
        self.registry = CollectorRegistry(auto_describe=False)
        self._lock = threading.Lock()
        self._snapshot = Snapshot()
        self.heartbeat = time.monotonic()
        self.assignment_errors = Counter(
            r.ASSIGNMENT_ERRORS,
            "Generations or tasks the worker could not apply",
            ["reason"],
            registry=self.registry,
        )
        self.clients_renewed = Counter(
            r.KAFKA_CLIENTS_RENEWED,
            "Long-lived Kafka consumers replaced because librdkafka knew no broker any more",
            ["client"],
            registry=self.registry,
        )
        self.registry.register(_SnapshotCollector(self))

    @property
    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot

    def stuck(self) -> str | None:
        """Why the worker is not well, if a Kafka call is stuck past its bound."""
        overrun = self.watchdog.stuck()
        return overrun.describe() if overrun is not None else None

    def publish(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshot = snapshot
            self.heartbeat = time.monotonic()
