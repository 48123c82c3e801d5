"""Where stores live: ``<state-dir>/<application>/<task>/<store>/`` (a RocksDB dir).

The layout outlives the process and the assignment (static membership: a pod
that restarts under the same name finds its stores and restores only their
tails). ``runtime`` opens stores here; the metrics report the checkpoints of
stores on disk that are not assigned (``segue_task_local_offset``), read
read-only with :func:`local_checkpoints`.
"""

from __future__ import annotations

from pathlib import Path

from segue.protocol.tasks import TaskId
from segue.worker.state.checkpoint import Checkpoint, CorruptCheckpoint
from segue.worker.state.engine import Engine, StoreCorrupt


class StateLayout:
    def __init__(self, state_dir: Path, application_id: str) -> None:
        self.root = state_dir / application_id

    def task_dir(self, task: str) -> Path:
        return self.root / task

    def store_dir(self, task: str, store: str) -> Path:
        return self.root / task / store

    def local_tasks(self) -> list[str]:
        """Task ids with a directory here, in task order."""
        if not self.root.is_dir():
            return []
        found: list[TaskId] = []
        for child in self.root.iterdir():
            try:
                found.append(TaskId.parse(child.name))
            except ValueError:
                continue
        return [str(t) for t in sorted(found)]

    def local_checkpoints(self, task: str) -> dict[str, Checkpoint]:
        """``{store: checkpoint}`` of a task's stores on disk; damaged ones are left out
        (they will be wiped and restored if the task is assigned)."""
        out: dict[str, Checkpoint] = {}
        task_dir = self.task_dir(task)
        if not task_dir.is_dir():
            return out
        for store_dir in sorted(p for p in task_dir.iterdir() if p.is_dir()):
            try:
                engine = Engine(store_dir, read_only=True)
            except StoreCorrupt:
                continue
            try:
                checkpoint = engine.checkpoint()
            except (StoreCorrupt, CorruptCheckpoint):
                checkpoint = None
            finally:
                engine.close()
            if checkpoint is not None:
                out[store_dir.name] = checkpoint
        return out
