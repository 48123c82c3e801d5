"""Restoration: replay changelog partitions into local stores, in batches.

One read_committed consumer (``assign()`` only, never a group member) serves
every changelog partition this worker restores: standbys and learners follow
their changelogs forever; an active task being started restores up to a
``target`` end offset (the last stable offset measured after its producer fenced
the previous owner) and is then handed back to ``runtime`` to process. Each
consumed batch becomes one atomic engine write per partition (data plus the new
position, ``store.TaskStore.apply_restored``). The position comes from the
records and from partition-EOF events, so commit markers and aborted records,
which read_committed skips, still count as read: restoration is complete when the
position reaches the end offset, not when the last data record was seen.
While any active task restores, standby partitions are paused so the task that
blocks processing goes first; ``standby_rate`` (records/s) also paces standbys and
learners when set, pausing their partitions between budgets, so warming up new
members cannot saturate the broker or the disk (an active is never paced).
A store that cannot take a batch (damaged, or its volume full) is not written past:
its task is handed back through :meth:`Restorer.take_failed` to be failed, which
removes its partitions, and it restores again from its checkpoint when retried.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from segue.worker.state.engine import StoreCorrupt, StoreFull
from segue.worker.state.store import TaskStore
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)

WARM_EVERY = 60.0  # seconds between metadata refreshes of one changelog topic


@dataclass
class Restoring:
    task: str
    store: TaskStore
    target: int | None  # end offset to reach (an active starting), None: follow (standby)
    end: int = 0  # the changelog's end offset as last seen
    start_offset: int = 0
    records: int = 0
    started: float = field(default_factory=time.monotonic)


class Restorer:
    def __init__(
        self, consumer: Consumer, batch_size: int = 10_000, standby_rate: float | None = None
    ) -> None:
        self.consumer = consumer
        self.batch_size = (
            batch_size if standby_rate is None else min(batch_size, int(standby_rate) or 1)
        )
        self.standby_rate = standby_rate
        self._standby_next = 0.0  # monotonic time before which standbys wait (pacing)
        self._parts: dict[tuple[str, int], Restoring] = {}
        self._paused: set[tuple[str, int]] = set()
        self.restored_total: dict[tuple[str, str], int] = {}  # (task, store) -> records
        self.restored_bytes: dict[tuple[str, str], int] = {}  # ... -> their key+value bytes
        self._warmed: dict[str, float] = {}
        self._failed: dict[str, Exception] = {}  # task -> why its store took no batch

    # -- membership --

    def add(self, task: str, store: TaskStore, target: int | None, end: int) -> Restoring:
        key = (store.changelog, store.partition)
        self._warm(store.changelog)
        entry = Restoring(task, store, target, end=end, start_offset=store.offset)
        self._parts[key] = entry
        self.consumer.incremental_assign([TopicPartition(key[0], key[1], store.offset)])
        # librdkafka keeps a partition's pause flag across unassign/assign: clear it.
        self.consumer.resume([TopicPartition(key[0], key[1])])
        self._prioritize()
        return entry

    def _warm(self, topic: str) -> None:
        """Make sure the consumer knows ``topic`` before assigning it: a topic new to
        librdkafka waits for its periodic topic scan (up to a second) otherwise."""
        now = time.monotonic()
        if now - self._warmed.get(topic, -WARM_EVERY) >= WARM_EVERY:
            with bounded("list_topics", 10):
                self.consumer.list_topics(topic, timeout=10)
            self._warmed[topic] = now

    def remove_task(self, task: str) -> None:
        keys = [k for k, e in self._parts.items() if e.task == task]
        if not keys:
            return
        paused = [TopicPartition(t, p) for t, p in keys if (t, p) in self._paused]
        if paused:
            self.consumer.resume(paused)
        for key in keys:
            del self._parts[key]
            self._paused.discard(key)
        self.consumer.incremental_unassign([TopicPartition(t, p) for t, p in keys])
        self._prioritize()

    def retarget(self, task: str, store: str, target: int) -> bool:
        """A standby's store becomes an active's: restore up to ``target`` without
        reassigning the partition (a reassignment costs a fetch restart)."""
        for entry in self._parts.values():
            if entry.task == task and entry.store.name == store:
                entry.target = target
                entry.start_offset, entry.records = entry.store.offset, 0
                entry.started = time.monotonic()
                self._prioritize()
                return True
        return False

    def entries(self, task: str | None = None) -> list[Restoring]:
        return [e for e in self._parts.values() if task is None or e.task == task]

    def follow(self, task: str) -> None:
        """An active task's restoration became a standby's (it was demoted mid-restore)."""
        for entry in self.entries(task):
            entry.target = None
        self._prioritize()

    @property
    def busy(self) -> bool:
        return bool(self._parts)

    @property
    def restoring_actives(self) -> bool:
        return any(e.target is not None for e in self._parts.values())

    def _paced(self) -> bool:
        return self.standby_rate is not None and time.monotonic() < self._standby_next

    def _prioritize(self) -> None:
        urgent = self.restoring_actives or self._paced()
        standby = {k for k, e in self._parts.items() if e.target is None}
        to_pause = standby - self._paused if urgent else set()
        to_resume = self._paused - standby if urgent else set(self._paused)
        if to_pause:
            self.consumer.pause([TopicPartition(t, p) for t, p in to_pause])
            self._paused |= to_pause
        if to_resume:
            self.consumer.resume([TopicPartition(t, p) for t, p in to_resume])
            self._paused -= to_resume
            self._refetch(to_resume)

    def _refetch(self, keys: set[tuple[str, int]]) -> None:
        """Fetch resumed partitions again at once: librdkafka resumes a paused partition's
        fetching only about a second later, a second a promoted learner's task waited
        to run and every paced batch added to its pause. A seek to where the store stands
        starts the fetch now (docs/benchmarks.md, "Resuming a paused changelog")."""
        for topic, partition in keys:
            entry = self._parts.get((topic, partition))
            if entry is None:
                continue
            try:
                self.consumer.seek(TopicPartition(topic, partition, entry.store.offset))
            except KafkaException as exc:  # not fetching yet: its first fetch starts anyway
                log.debug("restore of %s[%d]: no seek on resume: %s", topic, partition, exc)

    # -- the work --

    def poll(self, timeout: float) -> list[str]:
        """Consume one batch, apply it, and return the tasks whose active
        restoration is now complete (they are removed from the restorer)."""
        if self.standby_rate is not None:
            self._prioritize()  # a pacing pause may have run out
        messages: list[Message] = []
        if self._parts:
            with bounded("consume", timeout):
                messages = self.consumer.consume(self.batch_size, timeout)
        # The hot loop of restoration: as few calls per record as possible. Keys and
        # values are bytes (the consumer has no deserializer).
        changes: dict[Any, dict[Any, Any]] = {}
        positions: dict[Any, int] = {}
        counts: dict[Any, int] = {}
        sizes: dict[Any, int] = {}
        for msg in messages:
            error = msg.error()
            tp = (msg.topic(), msg.partition())
            if error is None:
                batch = changes.get(tp)
                if batch is None:
                    batch = changes[tp] = {}
                    counts[tp] = sizes[tp] = 0
                raw_key = msg.key()
                if raw_key is not None:
                    value = batch[raw_key] = msg.value()
                    counts[tp] += 1
                    sizes[tp] += len(raw_key) + len(value or b"")
                positions[tp] = msg.offset() + 1  # type: ignore[operator]
            elif error.code() == KafkaError._PARTITION_EOF:
                positions[tp] = max(positions.get(tp, 0), msg.offset() or 0)
            elif tp in self._parts:
                raise RestoreError(self._parts[tp].task, f"restoring {tp[0]}[{tp[1]}]: {error}")
        for tp, position in positions.items():
            entry = self._parts.get(tp)
            if entry is None or entry.task in self._failed:
                continue  # unassigned since it was fetched, or its task is failing
            entry.end = max(entry.end, position)
            count, nbytes = counts.get(tp, 0), sizes.get(tp, 0)
            if not self._apply(entry, changes.get(tp, {}), position, count, nbytes):
                continue
            if count:
                entry.records += count
                total_key = (entry.task, entry.store.name)
                self.restored_total[total_key] = self.restored_total.get(total_key, 0) + count
                self.restored_bytes[total_key] = self.restored_bytes.get(total_key, 0) + nbytes
                if entry.target is None and self.standby_rate is not None:
                    start = max(time.monotonic(), self._standby_next)
                    self._standby_next = start + count / self.standby_rate
        if self.standby_rate is not None:
            self._prioritize()
        return self._completed()

    def _apply(
        self, entry: Restoring, changes: dict[Any, Any], position: int, count: int, nbytes: int
    ) -> bool:
        """Write one partition's batch; False (and its task failing) if the store refused."""
        if position <= entry.store.offset and not count:
            return True
        try:
            entry.store.apply_restored(changes, max(position, entry.store.offset), count, nbytes)
        except (StoreCorrupt, StoreFull) as exc:
            self._failed[entry.task] = exc  # the consumer moved past the batch: fail the task
            return False
        return True

    def take_failed(self) -> dict[str, Exception]:
        """Tasks whose store could not take a batch since the last call, and why."""
        failed, self._failed = self._failed, {}
        return failed

    def _completed(self) -> list[str]:
        done_tasks: list[str] = []
        by_task: dict[str, list[Restoring]] = {}
        for entry in self._parts.values():
            if entry.target is not None:
                by_task.setdefault(entry.task, []).append(entry)
        for task, entries in by_task.items():
            if all(e.store.offset >= (e.target or 0) for e in entries):
                for e in entries:
                    log.info(
                        "restored task=%s store=%s from=%d to=%d records=%d seconds=%.3f",
                        task,
                        e.store.name,
                        e.start_offset,
                        e.store.offset,
                        e.records,
                        time.monotonic() - e.started,
                    )
                done_tasks.append(task)
                self.remove_task(task)
        return done_tasks

    def update_ends(self, ends: dict[tuple[str, int], int]) -> None:
        for key, end in ends.items():
            if key in self._parts:
                self._parts[key].end = max(self._parts[key].end, end)


class RestoreError(RuntimeError):
    def __init__(self, task: str, message: str) -> None:
        super().__init__(message)
        self.task = task


def restore_consumer_config(bootstrap: str, group_id: str, extra: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": "read_committed",
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "max.partition.fetch.bytes": 8 << 20,
        "fetch.max.bytes": 64 << 20,
        "fetch.wait.max.ms": 10,
    }
    config.update(extra)
    return config
