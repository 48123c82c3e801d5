"""An active task's committed writes reach disk once Kafka shows them stable.

``state.store.TaskStore`` keeps a committed transaction's writes in memory until its
changelog's last stable offset is past them (:meth:`~TaskStore.confirm`; why:
docs/worker.md, "State stores"). The offsets come from two places: the ends ``ends``
reads every few seconds for the lag reports (:func:`confirm`, on the loop, through
``taskset``), and reads right after a task's final commit (:func:`confirm_now`),
repeated while the markers land, when a generation lets the task go and when the
worker stops: a store left behind holds its last commit, and the next owner or a
restart restores nothing it wrote.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping

from confluent_kafka import KafkaException

from segue.worker.logs import about
from segue.worker.ownership import Task
from segue.worker.state.engine import StoreCorrupt, StoreFull
from segue.worker.state.store import TaskStore

log = logging.getLogger(__name__)

Partition = tuple[str, int]
Stable = Callable[[list[Partition], float], dict[Partition, int]]  # last stable offsets
LAST_COMMIT_READ = 2.0  # seconds the reads after a last commit may take in all
MARKERS = 0.02  # seconds between two reads while the markers land


def confirm(tasks: Mapping[str, Task], ends: Mapping[tuple[str, str], int]) -> dict[str, Exception]:
    """Each (task, store) in ``ends`` up to the end just read; the tasks whose store
    could not write, and why (the caller fails them)."""
    failed: dict[str, Exception] = {}
    for (name, store), end in ends.items():
        task = tasks.get(name)
        found = task.stores.get(store) if task is not None else None
        if found is None or not found.unconfirmed or name in failed:
            continue
        try:
            found.confirm(end)
        except (StoreFull, StoreCorrupt) as exc:
            failed[name] = exc
    return failed


def confirm_now(tasks: Iterable[Task], stable: Stable) -> None:
    """Read the ends of every store with writes waiting and confirm them, again until
    none waits or ``LAST_COMMIT_READ`` has passed: a commit returns once the coordinator
    has it, its markers (and so the last stable offset) follow a moment later. Best
    effort: what is not written now is restored from the changelog later."""
    waiting: dict[Partition, tuple[str, TaskStore]] = {
        (store.changelog, store.partition): (task.name, store)
        for task in tasks
        for store in task.stores.values()
        if store.unconfirmed
    }
    deadline = time.monotonic() + LAST_COMMIT_READ
    while waiting:
        try:
            ends = stable(list(waiting), max(0.1, deadline - time.monotonic()))
        except (KafkaException, TimeoutError) as exc:
            log.info("changelog ends not read (%s): the next start restores more", exc)
            return
        for partition, end in ends.items():
            name, store = waiting[partition]
            try:
                store.confirm(end)
            except (StoreFull, StoreCorrupt) as exc:
                log.warning(
                    "task %s: store %s not written: %s", name, store.name, exc, extra=about(name)
                )
                store.abort()  # nothing more to write: the next start restores it
        waiting = {p: w for p, w in waiting.items() if w[1].unconfirmed}
        if time.monotonic() >= deadline:
            return
        if waiting:
            time.sleep(MARKERS)
