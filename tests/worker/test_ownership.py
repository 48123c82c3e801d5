"""Unit tests of task ownership: the transition table, the retry back-off, what a
failure means, and how a task that cannot run is reported (pure, no broker)."""

from __future__ import annotations

from collections import deque

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from segue.protocol.reports import (
    REPORTED_STATES,
    TASK_ERROR,
    TASK_ERROR_MESSAGE_MAX,
    TaskErrorReason,
    TaskState,
)
from segue.worker import Topology, metrics
from segue.worker.active import TaskFailed
from segue.worker.failures import MAX_RETRY, Cause, blocker, failure_of, retry_delay
from segue.worker.metrics import Snapshot, TaskErrorReport, WorkerMetrics
from segue.worker.ownership import DOWN, TRANSITIONS, IllegalTransition, Task
from segue.worker.state.engine import StoreCorrupt, StoreFull, StoreLocked
from segue.worker.state.restore import RestoreError
from segue.worker.topics import ResolvedSub, resolve
from segue.worker.transaction import TaskAborted, TaskFenced

from .apps import wordcount_shape


def _cause(target: TaskState) -> Cause | None:
    return Cause(TaskErrorReason.START_FAILED, "boom") if target in DOWN else None


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
    task = Task("1_0", wordcount_shape().get(1), ResolvedSub(1, tasks=1), "active", 1)
    for step in paths[state]:
        task.move_to(step, _cause(step))
    assert task.state is state
    return task


@pytest.mark.parametrize("source", list(TaskState))
def test_every_legal_transition_is_accepted_and_every_other_refused(source: TaskState) -> None:
    for target in TaskState:
        task = _task_in(source)
        if target in TRANSITIONS[source]:
            task.move_to(target, _cause(target))
            assert (task.state, task.cause) == (target, _cause(target))
        else:
            with pytest.raises(IllegalTransition):
                task.move_to(target, _cause(target))
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
    assert set(REPORTED_STATES) == {s.value for s in TaskState} - {"new"}


def test_a_down_state_needs_a_cause_and_others_take_none() -> None:
    task = _task_in(TaskState.STARTING)
    with pytest.raises(ValueError, match="cause"):
        task.move_to(TaskState.FAILED)
    with pytest.raises(ValueError, match="cause"):
        task.move_to(TaskState.RUNNING, Cause(TaskErrorReason.START_FAILED, "x"))
    assert task.state is TaskState.STARTING
    task.move_to(TaskState.FAILED, Cause(TaskErrorReason.START_FAILED, "x"))
    task.move_to(TaskState.STARTING)
    assert task.cause is None  # leaving a down state clears its cause


def test_retry_back_off_doubles_from_half_a_second_up_to_10s() -> None:
    assert [retry_delay(n) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 10, 10]
    assert retry_delay(10_000) == MAX_RETRY == 10.0
    assert retry_delay(0) == 0.5


@pytest.mark.parametrize(
    ("exc", "reason", "retry", "wipe"),
    [
        (TaskFenced("task 0_0: fenced"), TaskErrorReason.FENCED, False, False),
        (TaskFailed("task 0_0: malformed record"), TaskErrorReason.RECORD_FAILED, False, False),
        (StoreCorrupt("bad block"), TaskErrorReason.STORE_FAILED, True, True),
        (StoreLocked("locked"), TaskErrorReason.STORE_FAILED, True, False),
        (StoreFull("write failed: File too large"), TaskErrorReason.STORE_FULL, True, False),
        (RestoreError("0_0", "restoring x[0]: gone"), TaskErrorReason.STORE_FAILED, True, False),
        (TaskAborted("task 0_0: commit failed"), TaskErrorReason.TRANSACTION_ABORTED, True, False),
        (RuntimeError("anything else"), TaskErrorReason.START_FAILED, True, False),
    ],
)
def test_what_a_failure_means(exc: BaseException, reason: str, retry: bool, wipe: bool) -> None:
    failure = failure_of(exc, TaskErrorReason.START_FAILED)
    assert (failure.cause.reason, failure.retry, failure.wipe) == (reason, retry, wipe)
    assert failure.reopen == isinstance(exc, StoreFull)  # kept, but reopened to write again
    assert failure.cause.message == str(exc)


def test_a_task_whose_topics_are_wrong_is_blocked_with_a_reason_naming_them() -> None:
    subs = resolve(wordcount_shape(), "wc", {"text": 3}, {}).subs
    assert blocker("0_1", subs[0]) is None
    cause = blocker("1_1", subs[1])
    assert cause is not None
    assert cause.reason == TaskErrorReason.TOPIC_MISSING
    assert "topic out does not exist" in cause.message
    beyond = blocker("0_3", subs[0])
    assert beyond is not None
    assert beyond.reason == TaskErrorReason.TASK_OUT_OF_RANGE
    # A changelog with more partitions than the sub-topology has tasks.
    existing = {"text": 3, "out": 3, "wc-words-repartition": 3, "wc-counts-changelog": 4}
    mismatch = blocker("1_0", resolve(wordcount_shape(), "wc", existing, {}).subs[1])
    assert mismatch is not None
    assert mismatch.reason == TaskErrorReason.PARTITION_MISMATCH
    assert "wc-counts-changelog" in mismatch.message
    app = Topology("j")
    app.subtopology([app.topic("a"), app.topic("b")], lambda r, c: None)
    split = blocker("0_0", resolve(app, "j", {"a": 2, "b": 3}, {}).subs[0])
    assert split is not None
    assert split.reason == TaskErrorReason.NOT_COPARTITIONED
    # Every reason the topics can give has its word.
    assert set(metrics.TOPIC_REASONS.values()) <= set(tuple(TaskErrorReason))


def test_task_errors_are_one_gauge_sample_per_task_with_a_short_message() -> None:
    registry = WorkerMetrics()
    long = "topic " + "x" * 500 + " does not exist"
    registry.publish(
        Snapshot(
            errors=(
                TaskErrorReport("1_0", TaskErrorReason.TOPIC_MISSING, "topic out\ndoes not exist"),
                TaskErrorReport("1_1", TaskErrorReason.TOPIC_MISSING, long),
            )
        )
    )
    text = generate_latest(registry.registry).decode()
    samples = [
        s
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == TASK_ERROR
    ]
    assert [(s.labels["task"], s.labels["reason"], s.value) for s in samples] == [
        ("1_0", "TopicMissing", 1.0),
        ("1_1", "TopicMissing", 1.0),
    ]
    assert samples[0].labels["message"] == "topic out does not exist"
    assert len(samples[1].labels["message"]) == TASK_ERROR_MESSAGE_MAX
    assert samples[1].labels["message"].startswith("topic xxx")
    assert set(samples[0].labels) == set(metrics.TASK_ERROR_LABELS)
