"""SIGTERM: the worker finishes its open transactions, checkpoints and exits 0
within the grace period; nothing is left open, and a restart restores nothing."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from .harness import create_topics, open_transactions, read_committed
from .scenarios import SteadyProducer, check_exact

pytestmark = pytest.mark.worker


def test_sigterm_commits_checkpoints_and_exits(
    kafka: Any, spawn: Any, assign: Any, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 2})
    args = {"application_id": app_id, "input": source, "output": output}
    tasks = ["0_0", "0_1"]
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": tasks}})
    state = tmp_path / "w0-state"
    # A long commit interval: a transaction is always open when SIGTERM arrives.
    extra = ["--commit-interval-ms", "2000", "--shutdown-timeout", "15"]
    w0 = spawn(
        "segue.worker.apps.tally:topology",
        "w0",
        configmap,
        app_args=args,
        state_dir=state,
        extra=extra,
    )
    w0.wait_ready()
    producer = SteadyProducer(kafka.bootstrap_servers, source, 2, keys=20, rate=800)
    producer.start()
    w0.wait_for(
        "processing",
        lambda: (
            sum(w0.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 800
        ),
    )
    began = time.monotonic()
    assert w0.terminate(timeout=30) == 0
    assert time.monotonic() - began < 15
    assert "stopped" in w0.log()
    changelog = f"{app_id}-counts-changelog"
    assert open_transactions(kafka.bootstrap_servers, {output: 2, changelog: 2}) == []

    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_ready()
    # The checkpoint written on the way out is the changelog's end (but for the last
    # commit marker): not a single record to restore.
    assert w0.log().count("restored task=") == 2
    assert w0.log().count("records=0 ") == 2
    for task in tasks:
        assert w0.metric("segue_task_restored_records_total", task=task, store="counts") in (
            None,
            0.0,
        )
    produced = producer.stop()
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= produced)
    check_exact(records, producer.sent)
