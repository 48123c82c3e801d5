"""Bad input never stops the rest, and is never skipped silently: an unknown task
or missing topic in the assignment, a malformed record, corrupt local state."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import rocksdict
from confluent_kafka import Consumer, TopicPartition

from segue.worker.state.engine import META_CF

from .harness import create_topics, produce, read_committed
from .scenarios import SteadyProducer, check_exact

pytestmark = pytest.mark.worker


def test_unknown_task_and_missing_topic_are_reported_and_the_rest_runs(
    kafka: Any, spawn: Any, assign: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"two-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 1, output: 1})
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": ["0_0", "1_0", "7_0", "0_5", "x"]}})
    args = {"application_id": app_id, "input": source, "missing": f"nope-{tag}", "output": output}
    w0 = spawn("tests.worker.apps:two_subs", "w0", configmap, app_args=args)
    w0.wait_for(
        "0_0 running", lambda: w0.metric("segue_task_state", task="0_0", state="running") == 1
    )
    assert w0.metric("segue_assignment_errors_total", reason="unknown_task") == 3
    assert w0.metric("segue_assignment_errors_total", reason="missing_topic") == 1
    assert w0.metric("segue_task_role", task="0_0", role="active") == 1
    # 1_0 is a task of the topology that cannot run: kept, failed, reported, retried;
    # 7_0 and x name no task at all: refused, and reported too.
    assert w0.metric("segue_task_state", task="1_0", state="failed") == 1
    errors = {
        dict(labels)["task"]: dict(labels)["reason"]
        for (name, labels), value in w0.metrics().items()
        if name == "segue_task_error" and value == 1
    }
    assert errors == {
        "1_0": "TopicMissing",
        "0_5": "TaskOutOfRange",
        "7_0": "UnknownTask",
        "x": "UnknownTask",
    }
    assert w0.get("/readyz")[0] == 503  # active tasks it was given do not run
    produce(kafka.bootstrap_servers, source, [(f"k{i}", f"v{i}") for i in range(50)])
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 50)
    assert len(records) == 50


def _windowed(kafka: Any, spawn: Any, assign: Any, on_error: str) -> tuple[Any, str, str, str]:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"win-{tag}", f"amounts-{tag}", f"totals-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 1, output: 1})
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": ["0_0"]}})
    args = {"application_id": app_id, "input": source, "output": output, "on_error": on_error}
    w0 = spawn("segue.worker.apps.windowed:topology", "w0", configmap, app_args=args)
    w0.wait_ready()
    base = 1_700_000_000_000
    good = [("u", json.dumps(i)) for i in range(10)]
    bad = [("u", "not json")]
    for key, value in (*good, *bad, *good):
        produce(kafka.bootstrap_servers, source, [(key, value)], timestamp=base)
    return w0, app_id, source, output


def committed_offset(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=30)[0].offset
    finally:
        consumer.close()


def test_malformed_record_stops_the_task_by_default(kafka: Any, spawn: Any, assign: Any) -> None:
    w0, app_id, source, _ = _windowed(kafka, spawn, assign, "stop")
    w0.wait_for(
        "task failed", lambda: w0.metric("segue_task_state", task="0_0", state="failed") == 1.0
    )
    assert "malformed record at" in w0.log()
    assert f"{source}[0]@10" in w0.log()  # the error names the record
    assert w0.get("/readyz")[0] == 503
    # Never skipped: the application's committed offset has not passed the bad record.
    assert committed_offset(kafka.bootstrap_servers, app_id, source) <= 10


@pytest.mark.parametrize("policy", ["skip", "dead_letter"])
def test_malformed_record_policies_go_on_and_count(
    kafka: Any, spawn: Any, assign: Any, policy: str
) -> None:
    w0, app_id, source, output = _windowed(kafka, spawn, assign, policy)
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 20)
    last = json.loads(records[-1][3])
    assert (last["count"], last["sum"]) == (20, 2 * sum(range(10)))
    w0.wait_for(
        "skip counted",
        lambda: w0.metric("segue_records_skipped_total", task="0_0", reason="malformed") == 1.0,
    )
    assert committed_offset(kafka.bootstrap_servers, app_id, source) == 21
    if policy == "dead_letter":
        dead = read_committed(
            kafka.bootstrap_servers, f"{app_id}-dead-letter", lambda r: len(r) >= 1
        )
        assert [(k, v) for _, _, k, v in dead] == [(b"u", b"not json")]


def test_corrupt_local_state_is_wiped_and_restored(
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
    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_ready()
    producer = SteadyProducer(kafka.bootstrap_servers, source, 2, keys=20, rate=1000)
    producer.start()
    w0.wait_for(
        "processing",
        lambda: (
            sum(w0.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 600
        ),
    )
    assert w0.terminate() == 0

    store_0 = state / app_id / "0_0" / "counts"
    store_1 = state / app_id / "0_1" / "counts"
    # Task 0_0: a damaged checkpoint (the bytes no longer match their checksum).
    options = rocksdict.Options(raw_mode=True)
    db = rocksdict.Rdict(
        str(store_0), options, column_families={META_CF: rocksdict.Options(raw_mode=True)}
    )
    meta = db.get_column_family(META_CF)
    raw = bytearray(meta[b"checkpoint"])
    raw[-2] ^= 0xFF
    meta[b"checkpoint"] = bytes(raw)
    del meta
    db.close()
    del db
    # Task 0_1: damaged files (RocksDB cannot open it).
    for name in ("CURRENT",):
        (store_1 / name).write_bytes(b"garbage\n")

    w0 = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args, state_dir=state)
    w0.wait_ready()
    log = w0.log()
    assert log.count("cannot be trusted") >= 2
    assert "checksum" in log
    produced = producer.stop()
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= produced)
    # Counts continue exactly where they were: the wiped stores were fully restored.
    check_exact(records, producer.sent)
