"""A task the worker cannot run is reported, not hidden, and starts by itself once
it can: WordCount whose output topic does not exist yet, on the real broker."""

from __future__ import annotations

import random
import re
import struct
import time
import uuid
from collections import Counter
from typing import Any

import pytest

from segue.protocol.reports import TASK_ERROR, TaskErrorReason

from .harness import WorkerProcess, create_topics, produce, read_committed

pytestmark = pytest.mark.worker

WORDS = ["kafka", "stream", "segue", "learner", "standby", "task", "store", "pod"]


def task_errors(worker: WorkerProcess) -> dict[str, tuple[str, str]]:
    """task -> (reason, message) of every ``segue_task_error`` sample set to 1."""
    out = {}
    for (name, labels), value in worker.metrics().items():
        if name == TASK_ERROR and value == 1.0:
            label = dict(labels)
            out[label["task"]] = (label["reason"], label["message"])
    return out


def lines(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 10))) for _ in range(n)]


def test_a_missing_output_topic_is_reported_and_its_tasks_start_once_it_exists(
    kafka: Any, spawn: Any, assign: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"wc-{tag}", f"text-{tag}", f"counts-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 3})  # not the output topic
    configmap = f"{app_id}-assignment"
    splitting, counting = ["0_0", "0_1", "0_2"], ["1_0", "1_1", "1_2"]
    assign(configmap, app_id, 1, {"w0": {"active": splitting + counting}})
    args = {"application_id": app_id, "input": source, "output": output}
    w0 = spawn("segue.worker.apps.wordcount:topology", "w0", configmap, app_args=args)

    # The counting sub-topology's tasks cannot run: each one is reported, with why.
    w0.wait_for("the counting tasks reported", lambda: set(task_errors(w0)) == set(counting))
    for task, (reason, message) in task_errors(w0).items():
        assert reason == TaskErrorReason.TOPIC_MISSING, (task, reason)
        assert output in message, message
        assert w0.metric("segue_task_state", task=task, state="failed") == 1.0
        assert w0.metric("segue_task_role", task=task, role="active") == 1.0
    # The splitting sub-topology runs meanwhile.
    w0.wait_for(
        "the splitting tasks running",
        lambda: all(
            w0.metric("segue_task_state", task=t, state="running") == 1.0 for t in splitting
        ),
    )
    before = lines(1, 300)
    produce(kafka.bootstrap_servers, source, [(None, line) for line in before])
    # Retried, not given up: the back-off grows while the topic stays missing...
    w0.wait_for("a few retries", lambda: "(retry in 2s)" in w0.log())
    assert set(task_errors(w0)) == set(counting)
    # ... and the worker is not ready while an active task cannot run.
    assert w0.get("/readyz")[0] == 503
    assert w0.metric("segue_worker_ready") == 0.0
    # Each refused task counted once for its generation, not once per retry.
    assert w0.metric("segue_assignment_errors_total", reason="missing_topic") == 3

    # Fixing the cause is enough: no new generation, no restart.
    create_topics(kafka.bootstrap_servers, {output: 3})
    created = time.monotonic()
    w0.wait_for("the errors cleared", lambda: not task_errors(w0), timeout=60)
    w0.wait_ready(timeout=max(1.0, 60 - (time.monotonic() - created)))
    assert w0.metric("segue_worker_ready") == 1.0
    assert w0.metric("segue_assignment_generation") == 1
    after = lines(2, 300)
    produce(kafka.bootstrap_servers, source, [(None, line) for line in after])

    # Exactly once, including what was written before the topic existed: per word
    # the committed counts are 1, 2, ..., n, in order.
    expected = Counter(w for line in before + after for w in re.split(r"\W+", line) if w)
    total = sum(expected.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total)
    history: dict[str, list[int]] = {}
    for _, _, key, value in records:
        history.setdefault(key.decode(), []).append(struct.unpack(">q", value)[0])
    assert history == {w: list(range(1, n + 1)) for w, n in expected.items()}
    assert len(records) == total
