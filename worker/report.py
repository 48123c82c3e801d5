"""Turn the worker's task state into the metrics snapshot the operator scrapes.

Runs on the main loop (``runtime``) and reads only the task set's read-only
views (``taskset.TaskSet.reports``, ``failures``, ...); the HTTP thread only ever
sees the immutable ``metrics.Snapshot`` built here. End offsets come from one
batched read_committed ListOffsets call every few seconds, off the loop
(``ends``), plus the partition-EOF events the restorer sees;
a running active task counts as caught up (lag 0), as docs/protocol.md says.
Every task that cannot run now becomes one ``segue_task_error`` sample.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from segue.protocol.reports import TaskState
from segue.worker.metrics import Snapshot, StoreReport, TaskErrorReport, TaskReport
from segue.worker.state.engine import directory_bytes
from segue.worker.state.layout import StateLayout
from segue.worker.taskset import TaskSet

if TYPE_CHECKING:
    from segue.worker.runtime import Worker

log = logging.getLogger(__name__)


def state_sizes(tasks: TaskSet, layout: StateLayout) -> dict[str, int]:
    names = set(tasks.owned()) | {task for task, _ in tasks.local_offsets()}
    return {name: directory_bytes(layout.task_dir(name)) for name in sorted(names)}


def snapshot(worker: Worker) -> Snapshot:
    tasks, restorer = worker.tasks, worker.restorer
    reports: list[TaskReport] = []
    for task in tasks.reports():
        entries = {e.store.name: e for e in restorer.entries(task.name)}
        stores: list[StoreReport] = []
        lag = 0
        for store in task.stores:
            entry = entries.get(store.name)
            end = max(store.end, entry.end if entry else 0)
            if entry is not None and entry.target is not None:
                end = max(end, entry.target)
            stores.append(
                StoreReport(
                    store.name, store.offset, end, store.changelog_records, store.changelog_bytes
                )
            )
            if task.state is not TaskState.RUNNING:
                lag += max(0, end - store.offset)
        reports.append(
            TaskReport(
                task.name,
                task.role,
                task.state.value,
                tuple(stores),
                lag,
                worker.sizes.get(task.name, 0),
            )
        )
    owned = tasks.owned()
    return Snapshot(
        generation=worker.generation,
        tasks=tuple(reports),
        local_offsets=tasks.local_offsets(),
        local_bytes={t: b for t, b in worker.sizes.items() if t not in owned},
        processed=tasks.processed(),
        restored_records=dict(restorer.restored_total),
        restored_bytes=dict(restorer.restored_bytes),
        skipped=tasks.skipped(),
        fenced=tasks.fenced(),
        wipes=tasks.wipes(),
        errors=tuple(
            TaskErrorReport(name, cause.reason, cause.message)
            for name, cause in sorted(tasks.causes().items())
        ),
        ready=worker.generation is not None and tasks.ready,
    )
