"""Active tasks' commits off the main loop: when one starts, ends, or is given up.

A commit's Kafka calls (``flush``, ``send_offsets_to_transaction``,
``commit_transaction``) can block past their timeouts: librdkafka 2.16 after a
broker restart or while a transaction coordinator moves (confluentinc/librdkafka#5456).
On the main loop that stalled every other task of the worker, and the watchdog then
ended the process. So ``processing`` hands each due commit here (:meth:`Committing.due`):
its changelog writes are produced on the loop (``ActiveTask.prepare_commit``), its
Kafka part runs on a thread of its own (``commit_threads``), and the loop goes on with
the other tasks. The committing task processes nothing meanwhile: records fetched for
it wait, in order (:meth:`Committing.take`), and run once the loop has seen the commit
end and finished it (``ActiveTask.finish_commit``: the stores, on the loop only).

A task's commit starts as soon as its transaction is due, between two of its records,
whether they come from a fetch or were held (:meth:`Committing.take`, :meth:`_land`): the
rest wait for that commit. A transaction never grows past the commit interval by more
than one record, so a backlog of records that take time cannot carry one past the
broker's transaction timeout (``segue.protocol.transactions``), which would abort it
and fence the task.

A commit one of whose calls overruns its bound is abandoned: its thread is left to the
call, and the task fails like any aborted transaction. The retry fences the abandoned
producer with a new one of the same transactional id (``fencing``): the broker aborts
what was open, or finds it committed, and the task restarts from what was committed,
the changelog's tail included. An abandoned thread never touches the task's stores,
and its producer closes only once its call returns (``transaction``).
Before the loop itself commits, ends or changes a task it settles the commit in
flight (:meth:`Committing.settle`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from functools import partial

from confluent_kafka import Message

from segue.protocol.reports import TaskErrorReason
from segue.worker.commit_threads import CommitThreads
from segue.worker.failures import failure_of
from segue.worker.guard import FailTask, guarded, reraise
from segue.worker.kafka import COMMIT_GRACE, COMMIT_TIMEOUT
from segue.worker.logs import about
from segue.worker.ownership import Task
from segue.worker.transaction import TaskAborted

log = logging.getLogger(__name__)


class Committing:
    def __init__(
        self,
        fail: FailTask,
        threads: CommitThreads | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fail = fail
        self.threads = threads or CommitThreads()
        self.clock = clock

    def take(self, task: Task, msg: Message) -> None:
        """``msg`` for ``task``: held while the task commits, else processed, and the
        task's commit started if its transaction is now due."""
        active = task.active
        if active is None or self.threads.hold(task.name, msg):
            return
        if guarded(task, self.fail, active.process, msg) and active.commit_due(self.clock()):
            self._start(task)

    def due(self, tasks: Iterable[Task], now: float) -> None:
        """Land the commits that ended, abandon those stuck, start those due, each on
        its own thread (``commit_threads``): no task's commit holds up another's."""
        by_name = {t.name: t for t in tasks}
        for flight in self.threads.landed():
            if (task := by_name.get(flight.task)) is not None:
                self._land(task, flight.error, flight.held, split=True)
        for flight, overrun in self.threads.stuck():
            if (task := by_name.get(flight.task)) is not None:
                self._abandon(task, overrun.describe())
        for task in by_name.values():
            active = task.active
            if active is None or task.name in self.threads or not active.commit_due(now):
                continue
            self._start(task)

    def _start(self, task: Task) -> None:
        """The task's changelog writes on the loop, then its commit's Kafka part on a
        thread of its own."""
        active = task.active
        if active is not None and guarded(task, self.fail, active.prepare_commit):
            self.threads.start(task.name, partial(active.send_commit, COMMIT_TIMEOUT))

    def now(self, tasks: list[Task], resume: bool, timeout: float | None = None) -> dict[str, bool]:
        """Commit the open transactions of ``tasks`` at once, each on its thread, and wait
        for them as :meth:`settle` does (a stuck one abandoned): task -> True if what
        it had open is committed (or it had nothing). A release, a stop, an expansion."""
        done = {t.name: self.settle(t, resume, timeout) for t in tasks}
        started = []
        for task in tasks:
            active = task.active
            if not done[task.name] or active is None or not active.in_txn:
                continue
            if resume:  # the task runs on: a failure here fails it
                prepared = guarded(task, self.fail, active.prepare_commit)
            else:
                prepared = _quietly(task, active.prepare_commit)  # the caller aborts
            if not prepared:
                done[task.name] = False
                continue
            self.threads.start(task.name, partial(active.send_commit, COMMIT_TIMEOUT))
            started.append(task)
        for task in started:
            done[task.name] = self.settle(task, resume, timeout)
        return done

    def _land(
        self, task: Task, error: BaseException | None, held: list[Message], split: bool = False
    ) -> bool:
        """A commit's thread ended: fail the task on its error, else finish the commit
        and process what was held meanwhile; with ``split`` (the loop's path), the next
        commit starts as soon as it is due and the rest is held for it. :meth:`settle`
        lands unsplit: its caller commits next itself, which bounds that transaction.
        True if the task runs on."""
        active = task.active
        if active is None:
            return False
        if error is not None:
            return guarded(task, self.fail, reraise, error)
        if not guarded(task, self.fail, active.finish_commit):
            return False
        for i, msg in enumerate(held):
            if task.active is not active or not guarded(task, self.fail, active.process, msg):
                return False
            if split and active.commit_due(self.clock()):
                self._start(task)
                for rest in held[i + 1 :]:
                    self.threads.hold(task.name, rest)
                return task.active is active
        return True

    def _abandon(self, task: Task, why: str, fail: bool = True) -> None:
        """Leave a stuck commit's thread to its call; the retry's fence ends its producer."""
        flight = self.threads.abandon(task.name)
        if task.active is not None:
            task.active.abandon(flight.thread if flight is not None else None)
        log.error("task %s: commit abandoned: %s", task.name, why, extra=about(task.name))
        if fail:
            stuck = TaskAborted(
                f"task {task.name}: commit abandoned: {why}; its producer is left to the "
                "call and fenced by a new one of the same transactional id"
            )
            self.fail(task, failure_of(stuck, TaskErrorReason.TRANSACTION_ABORTED))

    def settle(self, task: Task, resume: bool, timeout: float | None = None) -> bool:
        """Before the loop itself commits, ends or changes a task: wait (bounded) for
        its commit in flight. True if none was, or it ended well. With ``resume`` the
        task runs on (its held records are processed; a failed or stuck commit fails
        it); without, the caller ends it and only learns whether the commit went in
        (held records are dropped: their offsets stay uncommitted, the next owner reads
        them); a stuck one is abandoned either way."""
        if task.name not in self.threads:
            return True
        # a commit is three calls of COMMIT_TIMEOUT each; the wait ends at the first
        # call past its bound anyway (``CommitThreads.wait``)
        bound = COMMIT_TIMEOUT * 3 + COMMIT_GRACE if timeout is None else timeout
        flight = self.threads.wait(task.name, bound)
        if flight is None:
            overrun = self.threads.overrun(task.name)
            why = overrun.describe() if overrun else f"it did not end within {bound:g}s"
            self._abandon(task, why, fail=resume)
            return False
        if resume:
            return self._land(task, flight.error, flight.held)
        if flight.error is not None or task.active is None:
            log.warning(
                "task %s: commit failed: %s", task.name, flight.error, extra=about(task.name)
            )
            return False
        return _quietly(task, task.active.finish_commit)  # the caller aborts what is left


def _quietly(task: Task, step: Callable[[], None]) -> bool:
    """Run a step of a task its caller is ending anyway: a failure is logged, not raised."""
    try:
        step()
    except Exception as exc:
        log.warning("task %s: commit failed: %s", task.name, exc, extra=about(task.name))
        return False
    return True
