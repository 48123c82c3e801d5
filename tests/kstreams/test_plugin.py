"""Segue's plugin inside a real Kafka Streams app (4.3.1) on the real broker, with no
operator to answer: it reports, waits its bound, falls back to Kafka Streams' own sticky
assignor once (logged once), and the app counts every word exactly; the agent's endpoint
says which consumers the instance runs (how the operator maps a process id to its pod)
and counts the fallbacks (docs/kafka-streams.md, "When Segue is not there")."""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer

from segue.protocol.kstreams import TASK_ASSIGNOR_CLASS
from segue.stack.process import free_port
from tests.kstreams import app
from tests.worker.harness import create_topics, produce

pytestmark = [pytest.mark.kstreams, pytest.mark.timeout(600)]

LINES = [f"alpha beta {i % 7} gamma" for i in range(300)]


def counts(bootstrap: str, topic: str, want: dict[str, str], timeout: float) -> dict[str, str]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([topic])
    latest: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and latest != want:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is None:
                    latest[msg.key().decode()] = msg.value().decode()
    finally:
        consumer.close()
    return latest


def scrape(port: int, timeout: float) -> str:
    """The endpoint's text once it names a consumer (the app may still be starting)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            text = app.metrics(port)
        except (urllib.error.URLError, OSError):
            text = ""
        if "segue_kstreams_consumer_client{" in text:
            break
        time.sleep(0.5)
    return text


def test_without_the_operator_the_app_falls_back_and_counts_exactly(
    kafka: Any, tmp_path: Path
) -> None:
    jar, classpath = app.build()
    suffix = uuid.uuid4().hex[:6]
    source, sink, application = f"text-{suffix}", f"counts-{suffix}", f"wc-{suffix}"
    create_topics(kafka.bootstrap_servers, {source: 3, sink: 3})
    properties = tmp_path / "streams.properties"
    properties.write_text(
        "\n".join(
            [
                f"application.id={application}",
                f"bootstrap.servers={kafka.bootstrap_servers}",
                f"state.dir={tmp_path / 'state'}",
                "processing.guarantee=exactly_once_v2",
                "commit.interval.ms=100",
                "replication.factor=1",
                f"task.assignor.class={TASK_ASSIGNOR_CLASS}",
                "segue.answer.wait.ms=1000",
                f"input.topic={source}",
                f"output.topic={sink}",
            ]
        )
        + "\n"
    )
    port = free_port()
    log = tmp_path / "app.log"
    proc = app.start(jar, classpath, properties, port=port, log=log, env={})
    try:
        produce(kafka.bootstrap_servers, source, ((None, line.encode()) for line in LINES))
        want = Counter(w for line in LINES for w in line.split())
        got = counts(kafka.bootstrap_servers, sink, {w: str(n) for w, n in want.items()}, 180)
        assert got == {w: str(n) for w, n in want.items()}, log.read_text()[-4000:]
        text = scrape(port, 30)
        clients = re.findall(r'segue_kstreams_consumer_client\{client_id="([^"]+)"\} 1', text)
        assert clients, text
        assert all(c.startswith(application) and c.endswith("-consumer") for c in clients)
        # a running client is healthy (one in ERROR fails the probes: EndpointTest)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
            assert (reply.status, reply.read()) == (200, b"ok\n")
        fallbacks = re.search(r"^segue_kstreams_fallbacks_total (\d+)$", text, re.M)
        assert fallbacks is not None, text
        assert int(fallbacks.group(1)) >= 1, text
    finally:
        proc.terminate()
        proc.wait(60)
    output = log.read_text()
    assert output.count("not in a pod Segue manages") == 1, output[-4000:]
    assert "Kafka Streams' StickyTaskAssignor places" in output
