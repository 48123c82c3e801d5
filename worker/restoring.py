"""A task's local state: opening its stores, following its changelogs, wiping them.

``taskset`` calls this for every task that holds state: stores are opened
(damaged state is wiped and restored, ``state.opening``) before a task follows
its changelogs as a standby or learner, or restores their tail as a starting
active (``processing`` hands over the end offsets measured after the fence). The
changelog partitions themselves are read by one ``state.restore.Restorer``. A
learner also keeps its task's producer created here, ready for its promotion.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping

from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition

from segue.protocol.reports import TaskState
from segue.protocol.tasks import TaskId
from segue.worker.fencing import close as close_producer
from segue.worker.fencing import warm_metadata
from segue.worker.ownership import Task
from segue.worker.state.engine import StoreCorrupt, wipe
from segue.worker.state.layout import StateLayout
from segue.worker.state.opening import open_store
from segue.worker.state.restore import Restorer
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)

WATERMARK_TIMEOUT = 10.0


class Restoration:
    def __init__(
        self,
        application_id: str,
        *,
        layout: StateLayout,
        restorer: Restorer,
        producer_factory: Callable[[str], Producer],
        exactly_once: bool,
    ) -> None:
        self.application_id = application_id
        self.layout = layout
        self.restorer = restorer
        self.producer_factory = producer_factory
        self.exactly_once = exactly_once
        # (task, store) -> times its local state was wiped because it could not be trusted
        self.wiped: dict[tuple[str, str], int] = {}
        # (task, store) -> checkpointed offset of the stores on local disk whose task
        # this worker does not own (after a restart, or once it stopped the task).
        self.local_offsets = self.local_checkpoints()

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        consumer = self.restorer.consumer

        def query() -> tuple[int, int] | None:
            with bounded("get_watermark_offsets", WATERMARK_TIMEOUT):
                return consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=WATERMARK_TIMEOUT, cached=False
                )

        try:
            marks = query()
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._UNKNOWN_PARTITION:
                raise
            # A topic librdkafka last saw with no leader (its broker in a controlled
            # shutdown) stays "unknown" in its cache until its metadata is asked for
            # again: seen for 4 minutes of retries after a broker restart.
            log.info("%s[%d] unknown to the restore consumer: refreshing", topic, partition)
            warm_metadata(consumer, [topic])
            marks = query()
        if marks is None:
            raise KafkaException(f"no watermarks for {topic}[{partition}]")
        return int(marks[0]), int(marks[1])

    def local_checkpoints(self) -> dict[tuple[str, str], int]:
        """(task, store) -> checkpointed offset of every store on local disk."""
        return {
            (task, store): checkpoint.offset
            for task in self.layout.local_tasks()
            for store, checkpoint in self.layout.local_checkpoints(task).items()
        }

    def claim(self, name: str) -> None:
        """The task is owned again: its stores are no longer merely local."""
        for key in [k for k in self.local_offsets if k[0] == name]:
            del self.local_offsets[key]

    def changelogs(self, tasks: Iterable[Task]) -> dict[tuple[str, int], tuple[str, str]]:
        """(changelog, partition) -> (task, store) of every open store."""
        return {
            (store.changelog, store.partition): (task.name, name)
            for task in tasks
            for name, store in task.stores.items()
        }

    def update_ends(self, tasks: Mapping[str, Task], ends: Mapping[tuple[str, str], int]) -> None:
        """(task, store) -> a changelog end offset just read."""
        for (name, store), end in ends.items():
            task = tasks.get(name)
            if task is not None:
                task.ends[store] = max(task.ends.get(store, 0), end)

    def open_stores(self, task: Task) -> None:
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
                watermarks=self.watermarks,
            )
            task.stores[spec.name] = opened.store
            task.ends[spec.name] = opened.end
            if opened.wiped:
                self._count_wipe(task.name, spec.name)

    def enter(self, task: Task, fence_delay: float = 0.0) -> None:
        """Open the task's stores, then follow its changelogs (standby, learning) or
        wait ``fence_delay`` in ``starting`` (active: ``processing`` fences it).

        An active without a warm producer gets one first: a new client takes about half
        a second before ``init_transactions`` can answer, time it spends while the stores
        open and the fence delay passes instead of after them (issue 24)."""
        if task.role == "active" and self.exactly_once and task.spare is None:
            task.spare = self.producer_factory(task.name)
        if len(task.stores) != len(task.sub.stores):
            self.open_stores(task)
        if task.role == "active":
            task.move_to(TaskState.STARTING)
            task.fence_at = time.monotonic() + fence_delay
        else:
            self.follow(task)

    def follow(self, task: Task) -> None:
        """Become a standby (or learner): follow every changelog, forever."""
        task.move_to(TaskState.STANDBY)
        self.warm(task)
        for name, store in task.stores.items():
            store.abort()  # a standby's store holds committed changelog data only
            self.restorer.add(task.name, store, target=None, end=task.ends.get(name, 0))

    def restore_to(self, task: Task, ends: Mapping[str, int]) -> bool:
        """An active after its fence: restore each store up to ``ends`` (the last
        stable offsets measured after the fence). True if any store is behind.

        A store ahead of its changelog's last stable offset holds writes Kafka does
        not have committed: it is never served (``StoreCorrupt``: the task's state is
        wiped and restored), as Kafka Streams treats a checkpoint past the end."""
        behind = False
        for name, store in task.stores.items():
            end = ends[name]
            if store.offset > end:
                raise StoreCorrupt(
                    f"task {task.name} store {name}: local state is at changelog offset "
                    f"{store.offset}, past the last stable offset {end} read after the "
                    "fence: it holds writes Kafka did not commit"
                )
            task.ends[name] = end
            if store.offset < end:
                behind = True
                if not self.restorer.retarget(task.name, name, end):
                    self.restorer.add(task.name, store, target=end, end=end)
        if not behind:
            self.forget(task)
        return behind

    def forget(self, task: Task) -> None:
        """Stop reading the task's changelogs."""
        self.restorer.remove_task(task.name)

    def warm(self, task: Task) -> None:
        """A learner is about to be promoted: keep its producer created (connected to
        the cluster, not yet initialized), so the fence at promotion takes a few
        milliseconds instead of a cold client start (tens of ms, sometimes 500)."""
        if task.role == "learning" and self.exactly_once and task.state is TaskState.STANDBY:
            if task.spare is None:
                task.spare = self.producer_factory(task.name)
        else:
            self.take_spare(task, close=True)

    def take_spare(self, task: Task, close: bool = False) -> Producer | None:
        spare, task.spare = task.spare, None
        if spare is not None and close:
            close_producer(spare, task.name)
            return None
        return spare

    def close(self, task: Task) -> None:
        """The task stopped: close its stores, remembering the offsets they reached."""
        for name, store in task.stores.items():
            self.local_offsets[(task.name, name)] = store.offset
            store.close()

    def shut(self, task: Task) -> None:
        """Close the task's stores but keep their files; the next :meth:`enter` reopens
        them (after a write failed, RocksDB refuses every write until reopened)."""
        for store in task.stores.values():
            store.close()
        task.stores.clear()

    def wipe(self, task: Task) -> None:
        """The task's local state cannot be trusted: delete it (restored on retry)."""
        for name, store in task.stores.items():
            store.close()
            wipe(self.layout.store_dir(task.name, name))
            self._count_wipe(task.name, name)
        task.stores.clear()

    def _count_wipe(self, task: str, store: str) -> None:
        self.wiped[(task, store)] = self.wiped.get((task, store), 0) + 1
