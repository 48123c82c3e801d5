"""Open a task's store and decide whether its local state can be trusted.

A store is trusted only if it opens, its checkpoint decodes, names the changelog
partition it should mirror, and lies within the changelog's
``[log start, last stable offset]``. Anything else (damaged files, a damaged or
foreign checkpoint, state ahead of the changelog after the topic was
recreated, a position compaction or retention has passed) wipes the store, which
then restores from the start of the changelog: wrong state is never served.
``runtime`` opens stores through here; ``restore`` then reads the tail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from segue.worker.state.checkpoint import CorruptCheckpoint
from segue.worker.state.engine import Engine, StoreCorrupt, wipe
from segue.worker.state.layout import StateLayout
from segue.worker.state.store import TaskStore
from segue.worker.topology import StoreSpec

log = logging.getLogger(__name__)

# (changelog topic, partition) -> (log start offset, last stable offset)
Watermarks = Callable[[str, int], tuple[int, int]]


@dataclass
class Opened:
    store: TaskStore
    end: int  # the changelog's last stable offset when opened
    wiped: bool


def open_store(
    layout: StateLayout,
    *,
    task: str,
    spec: StoreSpec,
    changelog: str,
    partition: int,
    watermarks: Watermarks,
) -> Opened:
    path = layout.store_dir(task, spec.name)
    low, end = watermarks(changelog, partition)
    wiped = False
    for _attempt in range(2):
        engine: Engine | None = None
        try:
            engine = Engine(path)
            checkpoint = engine.checkpoint()
            store = TaskStore(spec, changelog, partition, engine)
            if checkpoint is None:
                store.offset = low
            elif (checkpoint.topic, checkpoint.partition) != (changelog, partition):
                raise CorruptCheckpoint(
                    f"checkpoint is for {checkpoint.topic}[{checkpoint.partition}]"
                )
            elif not low <= checkpoint.offset <= end:
                raise CorruptCheckpoint(
                    f"checkpoint offset {checkpoint.offset} is outside the changelog's "
                    f"[{low}, {end}]"
                )
            return Opened(store, end, wiped)
        except (StoreCorrupt, CorruptCheckpoint) as exc:
            log.error(
                "task %s store %s: local state cannot be trusted (%s); "
                "wiping it and restoring from %s[%d]",
                task,
                spec.name,
                exc,
                changelog,
                partition,
            )
            if engine is not None:
                engine.close()
            wipe(path)
            wiped = True
    raise StoreCorrupt(f"task {task} store {spec.name}: still unusable after wiping {path}")
