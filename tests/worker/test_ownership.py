"""Unit tests of task ownership: the transition table, the retry back-off and
what a failure means (pure, no broker)."""

from __future__ import annotations

from collections import deque

import pytest

from segue.worker import INT64, STRING, Topology, metrics
from segue.worker.active import TaskAborted, TaskFailed, TaskFenced
from segue.worker.ownership import (
    DOWN,
    MAX_RETRY,
    TRANSITIONS,
    IllegalTransition,
    Problem,
    Task,
    TaskState,
    failure_of,
    retry_delay,
)
from segue.worker.state.engine import StoreCorrupt, StoreLocked
from segue.worker.state.restore import RestoreError
from segue.worker.topics import ResolvedSub


def _wordcount() -> Topology:
    app = Topology("wc")
    text = app.topic("text", key=STRING, value=STRING)
    words = app.repartition("words", key=STRING, value=STRING)
    app.subtopology([text], lambda r, c: None, sinks=[words])
    app.subtopology(
        [words],
        lambda r, c: None,
        stores=[app.store("counts", STRING, INT64)],
        sinks=[app.topic("out", label="output")],
    )
    return app


def _problem(target: TaskState) -> Problem | None:
    return Problem(metrics.REASON_START_FAILED, "boom") if target in DOWN else None


def _task_in(state: TaskState) -> Task:
    """A task brought to ``state`` by legal moves only (so every state is reachable)."""
    paths: dict[TaskState, list[TaskState]] = {TaskState.NEW: []}
    queue = deque([TaskState.NEW])
    while queue:
        here = queue.popleft()
        for nxt in sorted(TRANSITIONS[here], key=lambda s: s.value):
            if nxt not in paths:
                paths[nxt] = [*paths[here], nxt]
                queue.append(nxt)
    task = Task("1_0", _wordcount().get(1), ResolvedSub(1, tasks=1), "active", 1)
    for step in paths[state]:
        task.move_to(step, _problem(step))
    assert task.state is state
    return task


@pytest.mark.parametrize("source", list(TaskState))
def test_every_legal_transition_is_accepted_and_every_other_refused(source: TaskState) -> None:
    for target in TaskState:
        task = _task_in(source)
        if target in TRANSITIONS[source]:
            task.move_to(target, _problem(target))
            assert (task.state, task.problem) == (target, _problem(target))
        else:
            with pytest.raises(IllegalTransition):
                task.move_to(target, _problem(target))
            assert task.state is source


def test_the_table_keeps_the_invariants() -> None:
    # Processing only after the fence: running is reached from starting (or its
    # restoring step) only; never from a standby or a failed task directly.
    assert {s for s, targets in TRANSITIONS.items() if TaskState.RUNNING in targets} == {
        TaskState.STARTING,
        TaskState.RESTORING,
    }
    # A fenced task stays down: nothing leaves fenced (it is stopped and recreated).
    assert TRANSITIONS[TaskState.FENCED] == frozenset()
    # Nothing goes back to new; a standby, owning no producer, is never fenced.
    assert all(TaskState.NEW not in targets for targets in TRANSITIONS.values())
    assert TaskState.FENCED not in TRANSITIONS[TaskState.STANDBY]
    # The states the metrics report are the table's (but "new", never reported).
    assert set(metrics.STATES) == {s.value for s in TaskState} - {"new"}


def test_a_down_state_needs_a_problem_and_others_take_none() -> None:
    task = _task_in(TaskState.STARTING)
    with pytest.raises(ValueError, match="problem"):
        task.move_to(TaskState.FAILED)
    with pytest.raises(ValueError, match="problem"):
        task.move_to(TaskState.RUNNING, Problem(metrics.REASON_START_FAILED, "x"))
    assert task.state is TaskState.STARTING
    task.move_to(TaskState.FAILED, Problem(metrics.REASON_START_FAILED, "x"))
    task.move_to(TaskState.STARTING)
    assert task.problem is None  # leaving a down state clears its problem


def test_retry_back_off_doubles_from_half_a_second_up_to_30s() -> None:
    assert [retry_delay(n) for n in range(1, 10)] == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]
    assert retry_delay(10_000) == MAX_RETRY == 30.0
    assert retry_delay(0) == 0.5


@pytest.mark.parametrize(
    ("exc", "reason", "retry", "wipe"),
    [
        (TaskFenced("task 0_0: fenced"), metrics.REASON_FENCED, False, False),
        (TaskFailed("task 0_0: malformed record"), metrics.REASON_RECORD_FAILED, False, False),
        (StoreCorrupt("bad block"), metrics.REASON_STORE_FAILED, True, True),
        (StoreLocked("locked"), metrics.REASON_STORE_FAILED, True, False),
        (RestoreError("0_0", "restoring x[0]: gone"), metrics.REASON_STORE_FAILED, True, False),
        (TaskAborted("task 0_0: commit failed"), metrics.REASON_TRANSACTION_ABORTED, True, False),
        (RuntimeError("anything else"), metrics.REASON_START_FAILED, True, False),
    ],
)
def test_what_a_failure_means(exc: BaseException, reason: str, retry: bool, wipe: bool) -> None:
    failure = failure_of(exc, metrics.REASON_START_FAILED)
    assert (failure.problem.reason, failure.retry, failure.wipe) == (reason, retry, wipe)
    assert failure.problem.message == str(exc)
