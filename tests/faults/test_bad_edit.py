"""Fault suite: a bad StreamApp edit, under input (issue 14).

Two kinds of bad edit reach a running WordCount app: one the CRD schema refuses
(``kubectl patch`` fails with the API server's 422 naming the field; nothing is
stored), and one the schema cannot see but the operator's models refuse (an env
var with both ``value`` and ``valueFrom``: ``Degraded``/``InvalidSpec`` naming the
field, one Warning event). Either way the app keeps running on its last good spec:
no pod is replaced or restarted, and committed output keeps growing. Fixing the edit
clears the condition, the app is balanced again, and every count is exact.
The app and its helpers are the operator suite's (``tests/operator``).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.operator.e2e import Apps, OperatorProcess, wait_for
from tests.operator.test_crd import kubectl  # noqa: F401  (fixture)
from tests.operator.test_e2e_scaling import assert_exact, merge, running, wordcount
from tests.worker.harness import read_committed

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def degraded(apps: Apps, name: str) -> tuple[str, str] | None:
    condition = apps.condition(name, "Degraded")
    if condition is None or condition.status != "True":
        return None
    return condition.reason, condition.message


def committed(kafka: Any, topic: str, at_least: int = 0) -> int:
    """Committed records in ``topic`` once there are at least ``at_least``."""
    return len(read_committed(kafka.bootstrap_servers, topic, lambda r: len(r) >= at_least, 60))


def containers(apps: Apps, name: str) -> dict[str, tuple[str, int]]:
    """pod -> (uid, restarts): what must not change while the app keeps running."""
    return {
        pod: (p.metadata.uid, sum(c.restart_count for c in p.status.container_statuses or []))
        for pod, p in apps.pods(name).items()
    }


def test_a_bad_edit_is_refused_and_the_app_keeps_running_on_its_last_good_spec(
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
    kubectl: Any,  # noqa: F811
) -> None:
    body, source, output = wordcount(kafka, "wc", 2)
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=600,
        rate=100,
    )
    try:
        pods = containers(apps, "wc")
        generation = apps.get("wc")["metadata"]["generation"]
        good_env = apps.get("wc")["spec"]["template"]["env"]

        # 1. The schema refuses: a clear error naming the field, nothing stored.
        error = kubectl(
            "patch",
            "streamapp",
            "wc",
            "--type=merge",
            "-p",
            json.dumps({"spec": {"scaling": {"learnerPromotion": "lazy"}}}),
            ok=False,
        )
        assert "spec.scaling.learnerPromotion" in error, error
        assert '"lazy"' in error, error
        assert apps.get("wc")["metadata"]["generation"] == generation

        # 2. The schema accepts, the operator refuses: said in Degraded and an event.
        bad = {"name": "SEGUE_NOTE", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}
        refused_at = committed(kafka, output)
        kubectl(
            "patch",
            "streamapp",
            "wc",
            "--type=merge",
            "-p",
            json.dumps({"spec": {"template": {"env": [*good_env, bad]}}}),
        )
        took = wait_for("Degraded: InvalidSpec", lambda: degraded(apps, "wc"), 30, why)
        found = degraded(apps, "wc")
        assert found is not None
        reason, message = found
        assert reason == "InvalidSpec", found
        assert f"spec.template.env[{len(good_env)}]" in message, message
        assert "value or valueFrom" in message, message
        assert ("InvalidSpec", message) in apps.events("wc")
        # The app keeps running on its last good spec: it goes on counting (200 lines
        # at 100/s), and no pod is replaced or restarted.
        time.sleep(5)
        during = committed(kafka, output, refused_at + 200)
        assert degraded(apps, "wc") == found
        assert containers(apps, "wc") == pods
        for pod in apps.pods("wc").values():
            assert "SEGUE_NOTE" not in str(pod.spec.containers[0].env)

        # 3. Fixing the edit clears the condition; the app is balanced again.
        kubectl(
            "patch",
            "streamapp",
            "wc",
            "--type=merge",
            "-p",
            json.dumps({"spec": {"template": {"env": good_env}}}),
        )
        fixed = wait_for(
            "Degraded cleared, balanced",
            lambda: degraded(apps, "wc") is None and apps.balanced("wc", 2),
            60,
            why,
        )
        assert containers(apps, "wc") == pods
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka, output, sent)
    print(
        f"bad edit: schema refused it; operator said InvalidSpec in {took:.1f}s; "
        f"{during - refused_at} outputs committed while refused; fixed -> balanced in "
        f"{fixed:.1f}s; {sum(sent.values())} lines exact"
    )
