"""One active task's Kafka transaction: begin, commit in three parts, abort, close.

In exactly-once mode (the default) a task's producer is transactional with
``transactional.id = <application>-<task>``: the processor's output, the task's
changelog records and its input offsets (group id = the application id) commit in one
Kafka transaction, and a newer owner's ``init_transactions`` fences this one at the
broker (:class:`TaskFenced`). A transaction begins with the first record after a
commit and is committed once it is ``commit_interval`` old, so none stays open while
the task is idle. A commit has three parts so that its Kafka part can run off the
main loop (``committing``): the changelog writes (:meth:`TaskTransaction.prepare_commit`,
on the loop), the flush, offsets and commit (:meth:`~TaskTransaction.send_commit`, any
thread) and the stores' own commit (:meth:`~TaskTransaction.finish_commit`, on the
loop). Stores (``state.store``) reach disk only after the transaction commits.
``active`` adds the records to this.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from segue.worker.closing import close_later
from segue.worker.kafka import (
    ABORT_TIMEOUT,
    CLOSE_TIMEOUT,
    COMMIT_GRACE,
    COMMIT_TIMEOUT,
    is_fenced,
)
from segue.worker.state.store import TaskStore
from segue.worker.trace import phase
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)


class TaskFenced(Exception):
    """Another owner took the task over: tear it down, do not retry."""


class TaskAborted(Exception):
    """The transaction was aborted (not fenced): restart the task from its commit."""


class TaskTransaction:
    def __init__(
        self,
        task_id: str,
        *,
        producer: Producer,
        stores: dict[str, TaskStore],
        consumer: Consumer,
        exactly_once: bool = True,
        commit_interval: float = 0.1,
    ) -> None:
        self.task_id = task_id
        self.producer = producer
        self.stores = stores
        self.consumer = consumer
        self.exactly_once = exactly_once
        self.commit_interval = commit_interval
        self.commits = 0
        self.in_txn = False
        self.txn_started = 0.0
        self._offsets: dict[tuple[str, int], int] = {}
        self.committed: dict[tuple[str, int], int] = {}  # input offsets its commits covered
        self._changelog_last: dict[str, int] = {}
        self._delivery_error: KafkaError | None = None
        self._commit_began = 0.0
        self._group_metadata: object = None
        self.abandoned = False  # its producer hung in a commit (``committing``)
        self._hung: threading.Thread | None = None  # the commit's thread, still in a call
        self._abort_open = False  # abort() left a transaction for close() to abort

    def _produce(
        self,
        topic: str,
        *,
        key: bytes | None,
        value: bytes | None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
        on_delivery: Callable[[KafkaError | None, Message], None] | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {"key": key, "value": value}
        # Under exactly-once a failed delivery fails commit_transaction, so records need
        # no report of their own: a Python callback per record, run by flush() on the
        # commit's thread (``committing``), would wait for the GIL each time.
        if on_delivery is not None or not self.exactly_once:
            kwargs["on_delivery"] = on_delivery or self._delivered
        if partition is not None:
            kwargs["partition"] = partition
        if timestamp:
            kwargs["timestamp"] = timestamp
        if headers:
            kwargs["headers"] = headers
        while True:
            try:
                self.producer.produce(topic, **kwargs)
                return
            except BufferError:
                self.producer.poll(0.05)
            except KafkaException as exc:
                self._raise_for(exc.args[0], "produce")

    def _delivered(self, error: KafkaError | None, msg: Message) -> None:
        if error is not None and self._delivery_error is None:
            self._delivery_error = error

    def _begin(self) -> None:
        if self.in_txn:
            return
        if self.exactly_once:
            try:
                self.producer.begin_transaction()
            except KafkaException as exc:
                self._raise_for(exc.args[0], "begin_transaction")
        self.in_txn = True
        self.txn_started = time.monotonic()

    def commit_due(self, now: float) -> bool:
        return self.in_txn and now - self.txn_started >= self.commit_interval

    def commit(self, timeout: float = COMMIT_TIMEOUT) -> None:
        """Write the changelog, commit output + changelog + offsets, then the stores."""
        if self.in_txn:
            self.prepare_commit()
            self.send_commit(timeout)
            self.finish_commit()

    def prepare_commit(self) -> None:
        """The commit's first part, on the main loop: the stores' writes to the changelog."""
        self._commit_began = time.monotonic()
        # Read here, not on the commit's thread: there it waited ~1 s for the consumer
        # (a handover's first commits took 1.0-1.5 s instead of 0.03-0.2 s, measured).
        self._group_metadata = self.consumer.consumer_group_metadata()
        self._changelog_last.clear()
        for store in self.stores.values():
            callback = self._changelog_callback(store.name)
            writes = list(store.changelog_writes().items())
            for i, (key, value) in enumerate(writes, 1):
                self._produce(
                    store.changelog,
                    key=key,
                    value=value,
                    partition=store.partition,
                    # its last record's offset is the store's (one partition: in order)
                    on_delivery=callback if i == len(writes) or not self.exactly_once else None,
                )

    def send_commit(self, timeout: float = COMMIT_TIMEOUT) -> None:
        """The commit's Kafka part: any thread (``committing``), while nothing else uses
        this task; it touches no store."""
        try:
            with bounded("flush", timeout, COMMIT_GRACE):
                undelivered = self.producer.flush(timeout)
        except KafkaException as exc:
            self._raise_for(exc.args[0], "flush")
        if undelivered > 0:
            raise TaskAborted(f"task {self.task_id}: output not delivered within {timeout}s")
        if self._delivery_error is not None:
            self._raise_for(self._delivery_error, "delivery")
        if not self.exactly_once:
            return  # its input offsets: finish_commit
        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self._offsets.items())]
        try:
            if offsets:
                with bounded("send_offsets_to_transaction", timeout, COMMIT_GRACE):
                    self.producer.send_offsets_to_transaction(
                        offsets, self._group_metadata, timeout
                    )
            with bounded("commit_transaction", timeout, COMMIT_GRACE):
                self.producer.commit_transaction(timeout)
        except KafkaException as exc:
            self._raise_for(exc.args[0], "commit")

    def finish_commit(self) -> None:
        """The commit's last part, on the main loop once Kafka has it: the stores, and
        at least once, the input offsets now that the output is delivered (by the
        consumer, on its own thread, without waiting: from the commit's thread a
        synchronous commit lagged a second behind the output, and a failed one only
        means those records are processed again)."""
        if not self.exactly_once and self._offsets:
            offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self._offsets.items())]
            try:
                self.consumer.commit(offsets=offsets, asynchronous=True)
            except KafkaException as exc:
                log.warning("task %s: committing input offsets failed: %s", self.task_id, exc)
        for store in self.stores.values():
            store.commit(self._changelog_last.get(store.name))
        self.committed.update(self._offsets)
        self._offsets.clear()
        self.in_txn = False
        if not self.commits:
            took = time.monotonic() - self._commit_began
            phase(self.task_id, "first-commit", f"seconds={took:.3f}")
        self.commits += 1

    def _changelog_callback(self, store: str) -> Callable[[KafkaError | None, Message], None]:
        def delivered(error: KafkaError | None, msg: Message) -> None:
            if error is not None:
                self._delivered(error, msg)
            else:
                offset = int(msg.offset() or 0)
                self._changelog_last[store] = max(self._changelog_last.get(store, -1), offset)

        return delivered

    def _raise_for(self, error: KafkaError, what: str) -> None:
        if is_fenced(error):
            raise TaskFenced(f"task {self.task_id}: fenced during {what}: {error}")
        raise TaskAborted(f"task {self.task_id}: {what} failed: {error}")

    def abort(self) -> None:
        """Drop the open transaction: the stores' uncommitted writes now, the broker's
        records when :meth:`close` aborts it, off the loop (a fenced or abandoned
        producer's is ended by its next owner's fence)."""
        for store in self.stores.values():
            store.abort()
        self._offsets.clear()
        open_ = self.in_txn and self.exactly_once and not self.abandoned
        self._abort_open = self._abort_open or open_
        self.in_txn = False

    def abandon(self, thread: threading.Thread | None) -> None:
        """Its commit hangs in a call on ``thread`` (``committing``): the producer is
        that thread's until the call returns."""
        self.abandoned = True
        self._hung = thread

    def close(self) -> threading.Thread:
        """Abort what :meth:`abort` left open and close the producer, off the loop
        (``closing``), on the thread returned. An abandoned one may never close:
        stopping does not wait for it."""
        what = f"task {self.task_id}"
        return close_later(what, self._abort_and_close, CLOSE_TIMEOUT, drained=not self.abandoned)

    def _abort_and_close(self) -> None:
        if self._hung is not None:
            # close() destroys the client under any call still running on it: a use
            # after free, the likely cause of a worker that died mid-fault of an
            # AttributeError for a method its class has, raised out of a flush.
            # So an abandoned producer closes once its hung call returns, if ever.
            self._hung.join()
        if self._abort_open:  # not watched: a hang here holds up nothing but this close
            try:
                self.producer.abort_transaction(ABORT_TIMEOUT)
            except KafkaException as exc:
                log.debug("task %s: abort_transaction failed: %s", self.task_id, exc)
        self.producer.close()
