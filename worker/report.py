"""Turn the worker's task state into the metrics snapshot the operator scrapes.

Runs on the main loop (``runtime``), so it may read task state freely; the HTTP
thread only ever sees the immutable ``metrics.Snapshot`` built here. End
offsets come from one batched read_committed ListOffsets call every few
seconds (``kafka.Admin.end_offsets``), plus the partition-EOF events the
restorer sees; a running active task counts as caught up (lag 0), as
docs/protocol.md says.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from confluent_kafka import KafkaException

from segue.worker.kafka import Admin
from segue.worker.metrics import Snapshot, StoreReport, TaskReport
from segue.worker.state.engine import directory_bytes
from segue.worker.state.layout import StateLayout
from segue.worker.state.restore import Restorer
from segue.worker.taskset import TaskSet

if TYPE_CHECKING:
    from segue.worker.runtime import Worker

log = logging.getLogger(__name__)


def refresh_ends(tasks: TaskSet, restorer: Restorer, admin: Admin) -> None:
    keys = {
        (store.changelog, store.partition): (task.name, name)
        for task in tasks.tasks.values()
        for name, store in task.stores.items()
    }
    if not keys:
        return
    try:
        ends = admin.end_offsets(keys, timeout=2.0)
    except KafkaException as exc:
        log.debug("end offsets unavailable: %s", exc)
        return
    restorer.update_ends(ends)
    for key, end in ends.items():
        task_name, store_name = keys[key]
        task = tasks.tasks.get(task_name)
        if task is not None:
            task.ends[store_name] = max(task.ends.get(store_name, 0), end)


def state_sizes(tasks: TaskSet, layout: StateLayout) -> dict[str, int]:
    names = set(tasks.tasks) | {task for task, _ in tasks.local_offsets}
    return {name: directory_bytes(layout.task_dir(name)) for name in sorted(names)}


def snapshot(worker: Worker) -> Snapshot:
    tasks, restorer = worker.tasks, worker.restorer
    reports: list[TaskReport] = []
    processed = dict(tasks.processed_total)
    for task in tasks.tasks.values():
        entries = {e.store.name: e for e in restorer.entries(task.name)}
        stores: list[StoreReport] = []
        lag = 0
        for name, store in sorted(task.stores.items()):
            entry = entries.get(name)
            end = max(task.ends.get(name, 0), entry.end if entry else 0)
            if entry is not None and entry.target is not None:
                end = max(end, entry.target)
            stores.append(StoreReport(name, store.offset, end))
            if task.status != "running":
                lag += max(0, end - store.offset)
        reports.append(
            TaskReport(
                task.name,
                task.role,
                task.status,
                tuple(stores),
                lag,
                worker.sizes.get(task.name, 0),
            )
        )
        if task.active is not None:
            processed[task.name] = processed.get(task.name, 0) + task.active.processed
    return Snapshot(
        generation=worker.generation,
        tasks=tuple(reports),
        local_offsets=dict(tasks.local_offsets),
        local_bytes={t: b for t, b in worker.sizes.items() if t not in tasks.tasks},
        processed=processed,
        restored_records=dict(restorer.restored_total),
        skipped=dict(tasks.skipped),
        fenced=dict(tasks.fenced),
        ready=worker.generation is not None and tasks.ready,
    )
