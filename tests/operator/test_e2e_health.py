"""Honest health end to end: a task that cannot run shows up in the status, events and
readiness with the reason, a scale waits on it openly, and once the cause is fixed the
app recovers by itself and the scale finishes with exact counts."""

from __future__ import annotations

from typing import Any

import pytest

from segue.stack.apps import Apps, text_input
from tests.worker.harness import create_topics

from .e2e import OperatorProcess, wait_event, wait_for
from .test_e2e_scaling import PARTITIONS, assert_exact, diagnose, merge, prefill, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def degraded(apps: Apps, name: str) -> tuple[str, str] | None:
    condition = apps.condition(name, "Degraded")
    if condition is None or condition.status != "True":
        return None
    return condition.reason, condition.message


def test_a_missing_output_topic_is_reported_and_the_app_recovers_once_it_exists(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output = wordcount(kafka, "wc", 2, create_output=False)
    apps.create(body)
    why = diagnose(apps, "wc", operator, pod_runner)
    before = prefill(kafka, source, 600)
    producer = text_input(kafka.bootstrap_servers, source, words=60, rate=50)
    producer.start()
    try:
        # The counting sub-topology (1) cannot run anywhere: said with the reason.
        wait_for("Degraded naming the missing topic", lambda: degraded(apps, "wc"), 120, why)
        found = degraded(apps, "wc")
        assert found is not None
        reason, message = found
        assert reason == "TopicMissing"
        assert output in message
        assert "1_" in message
        status = apps.status("wc")
        errors = [e for m in status.members or [] for e in m.errors or []]
        assert errors
        assert {e.reason for e in errors} == {"TopicMissing"}
        assert all(e.task.startswith("1_") for e in errors)
        assert status.phase == "Degraded"
        # A pod with a task it cannot run is not ready: once its readiness probe has
        # failed failureThreshold (3) times, 2 s apart, after the task failed.
        wait_for("no pod ready", lambda: (apps.status("wc").ready_replicas or 0) == 0, 30, why)
        wait_event(apps, "wc", "TopicMissing")

        # A scale asked for meanwhile waits openly, it does not claim to be restoring.
        apps.scale("wc", 3)
        wait_for(
            "the scale to start",
            lambda: any(m.role == "joining" or m.learning for m in apps.status("wc").members or []),
            120,
            why,
        )

        # Fix the cause: the workers' retries pick it up, nobody restarts anything.
        restarts = {n: p.status.container_statuses for n, p in apps.pods("wc").items()}
        create_topics(kafka.bootstrap_servers, {output: PARTITIONS})
        wait_for("3 pods balanced", lambda: apps.balanced("wc", 3), 240, why)
        assert degraded(apps, "wc") is None
        assert all(not m.errors for m in apps.status("wc").members or [])
        for name, statuses in restarts.items():
            pod = apps.pods("wc").get(name)
            if pod is not None and statuses:
                assert pod.status.container_statuses[0].restart_count == (
                    statuses[0].restart_count
                ), f"{name} was restarted"
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka, output, sent)
