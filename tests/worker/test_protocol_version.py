"""A worker given an assignment document of a version it does not know says so (log and
metric) and keeps running its last assignment: a newer operator never half-drives it."""

from __future__ import annotations

import gzip
import json
import uuid
from typing import Any

import pytest

from segue.protocol import DOCUMENT_VERSION

from .harness import create_topics, produce, publish_encoded, read_committed

pytestmark = pytest.mark.worker


def test_an_unknown_document_version_is_reported_and_the_last_generation_keeps_running(
    kafka: Any, kube_api: Any, namespace: str, spawn: Any, assign: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"ver-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 2})
    configmap = f"{app_id}-assignment"
    assign(configmap, app_id, 1, {"w0": {"active": ["0_0", "0_1"]}})
    args = {"application_id": app_id, "input": source, "output": output}
    worker = spawn("segue.worker.apps.tally:topology", "w0", configmap, app_args=args)
    worker.wait_ready()
    produce(kafka.bootstrap_servers, source, [(f"k{i}", "x") for i in range(20)])
    read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 20)

    # Generation 2 from "a newer operator": it would take every task away.
    newer = {
        "version": DOCUMENT_VERSION + 1,
        "application_id": app_id,
        "generation": 2,
        "members": {"w0": {"active": []}},
        "assignments": [],
    }
    publish_encoded(kube_api, namespace, configmap, 2, gzip.compress(json.dumps(newer).encode()))
    worker.wait_for(
        "the unsupported version to be counted",
        lambda: worker.metric("segue_assignment_errors_total", reason="unsupported_version") == 1,
    )
    assert f"version {DOCUMENT_VERSION + 1} is not supported" in worker.log()
    assert worker.metric("segue_assignment_generation") == 1
    assert worker.metric("segue_task_role", task="0_0", role="active") == 1

    # ... and it still processes: 20 more records come out, none lost or doubled.
    produce(kafka.bootstrap_servers, source, [(f"k{i}", "y") for i in range(20)])
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 40)
    assert len(records) == 40
    assert worker.get("/readyz")[0] == 200
