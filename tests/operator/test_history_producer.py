"""The operator's history producer against the session's real broker: rows sent
asynchronously are read back from the topic, valid and keyed ``namespace/app``, in
order; a cluster that refuses the login costs a counted, logged failure, never an
exception in the step, and the log never carries the password."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import pytest

from segue.operator.act.history import HistoryProducer
from segue.operator.metrics import OperatorMetrics
from segue.protocol.history import HistoryRecord
from tests.worker.harness import create_topics, read_committed

pytestmark = pytest.mark.worker


def row(app: str, i: int) -> HistoryRecord:
    return HistoryRecord(namespace="ns", app=app, time=1000.0 + i, spec_replicas=2, generation=i)


def sample(metrics: OperatorMetrics, name: str, app: str) -> float:
    return metrics.registry.get_sample_value(f"{name}_total", {"namespace": "ns", "app": app}) or 0


def test_rows_are_read_back_from_the_topic_in_order(kafka: Any) -> None:
    topic = f"history-{uuid.uuid4().hex[:6]}"
    create_topics(kafka.bootstrap_servers, {topic: 3})
    metrics = OperatorMetrics()
    producer = HistoryProducer(topic, metrics)
    started = time.monotonic()
    for i in range(20):
        producer.send(kafka.bootstrap_servers, {}, row("wc", i))
        producer.send(kafka.bootstrap_servers, {}, row("other", i))
    assert time.monotonic() - started < 1.0  # enqueued, not waited for
    assert producer.flush(30) == 0
    records = read_committed(kafka.bootstrap_servers, topic, lambda r: len(r) >= 40, 60)
    back: dict[bytes, list[HistoryRecord]] = {}
    for _, _, key, value in sorted(records):
        back.setdefault(key, []).append(HistoryRecord.model_validate_json(value))
    assert sorted(back) == [b"ns/other", b"ns/wc"]
    assert back[b"ns/wc"] == [row("wc", i) for i in range(20)]  # one partition: in order
    producer.send(kafka.bootstrap_servers, {}, row("wc", 20))  # serves the callbacks
    producer.flush(30)
    assert sample(metrics, "segue_operator_history_records", "wc") >= 20
    assert sample(metrics, "segue_operator_history_failures", "wc") == 0


def test_a_refused_login_is_counted_and_logged_without_the_password(
    kafka_sasl: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = f"wrong-{uuid.uuid4().hex}"
    credentials = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": kafka_sasl.username,
        "sasl.password": wrong,
    }
    metrics = OperatorMetrics()
    producer = HistoryProducer("history-refused", metrics, timeout=3.0)
    with caplog.at_level(logging.WARNING, logger="segue.operator.history"):
        producer.send(kafka_sasl.bootstrap, credentials, row("wc", 0))  # never raises
        deadline = time.monotonic() + 60
        while not sample(metrics, "segue_operator_history_failures", "wc"):
            assert time.monotonic() < deadline, "the failed delivery was never counted"
            producer.flush(1)
    assert "ns/wc: history record to history-refused not delivered" in caplog.text
    assert wrong not in caplog.text
