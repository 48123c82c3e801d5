"""Two workers handed the same task: the stale owner, which never sees the new
assignment, is fenced by the broker, and the committed output stays exact."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException

from segue.stack.process import free_port
from segue.worker.kafka import committed_offsets

from .harness import create_topics, read_committed
from .scenarios import SteadyProducer, check_exact

pytestmark = pytest.mark.worker


def test_stale_owner_is_fenced_and_counts_stay_exact(kafka: Any, spawn: Any, assign: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 2})
    args = {"application_id": app_id, "input": source, "output": output}
    tasks = ["0_0", "0_1"]
    # Each worker watches its own ConfigMap: w0's is never updated again, so w0 never
    # learns that its tasks moved. Only the broker can stop it.
    assign(f"{app_id}-stale", app_id, 1, {"w0": {"active": tasks}})
    assign(f"{app_id}-fresh", app_id, 2, {"w1": {"active": tasks}})
    w0 = spawn("segue.worker.apps.tally:topology", "w0", f"{app_id}-stale", app_args=args)
    w0.wait_ready()
    producer = SteadyProducer(kafka.bootstrap_servers, source, 2, keys=30, rate=1000)
    producer.start()
    w0.wait_for(
        "w0 processing",
        lambda: (
            sum(w0.metric("segue_task_records_processed_total", task=t) or 0 for t in tasks) >= 500
        ),
    )

    w1 = spawn("segue.worker.apps.tally:topology", "w1", f"{app_id}-fresh", app_args=args)
    w1.wait_ready()
    for task in tasks:
        w0.wait_for(
            f"{task} fenced on w0",
            lambda t=task: w0.metric("segue_task_state", task=t, state="fenced") == 1.0,
        )
        assert (w0.metric("segue_task_fenced_total", task=task) or 0) >= 1
    assert w0.get("/readyz")[0] == 503  # its active tasks are not running
    assert w0.metric("segue_assignment_generation") == 1  # it never saw the move

    produced = producer.stop()
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= produced)
    check_exact(records, producer.sent)
    assert len(records) == produced
    assert "fenced" in w0.log()


def test_a_committed_offsets_read_that_times_out_says_why() -> None:
    """Where a task resumes is a stable offset fetch, which a hanging transaction holds
    for good: its timeout names the partitions and the likely cause, not librdkafka's
    bare ``_TIMED_OUT`` (here no broker answers at all)."""
    consumer = Consumer(
        {
            "bootstrap.servers": f"127.0.0.1:{free_port()}",  # nothing listens
            "group.id": "g",
            "isolation.level": "read_committed",
            "log_level": 0,
        }
    )
    try:
        with pytest.raises(KafkaException) as raised:
            committed_offsets(consumer, [("text", 0), ("text", 3)], timeout=1.0)
    finally:
        consumer.close()
    error = raised.value.args[0]
    assert error.code() == KafkaError._TIMED_OUT
    assert "committed offsets of text[0], text[3] not given within 1s" in error.str()
    assert "hanging transaction" in error.str()
