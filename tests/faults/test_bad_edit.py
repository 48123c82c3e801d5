"""Fault suite: a bad StreamApp edit, under input (issue 14).

Two kinds of bad edit reach a running WordCount app: one the CRD schema refuses
(``kubectl patch`` fails with the API server's 422 naming the field; nothing is
stored), and one the schema cannot see but the operator's models refuse (an env
var with both ``value`` and ``valueFrom``: ``Degraded``/``InvalidSpec`` naming the
field, one Warning event). Either way the app keeps running on its last good spec:
no pod is replaced or restarted, and every task keeps committing (no stall of
``RESUME_BOUND``). Fixing the edit clears the condition, the app is balanced again,
every count is exact and no task ever had two owners (the suite's ``harness``).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_event, wait_for
from tests.operator.test_crd import kubectl  # noqa: F401  (fixture)
from tests.operator.test_e2e_health import degraded

from .harness import NAME, start

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def patch(run_kubectl: Any, spec: dict[str, Any], ok: bool = True) -> str:
    """``kubectl patch --type=merge`` of the app's spec, as a user edits it."""
    body = json.dumps({"spec": spec})
    return str(run_kubectl("patch", "streamapp", NAME, "--type=merge", "-p", body, ok=ok))


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
    run = start(kafka, apps, operator, pod_runner, replicas=2, lines=600, rate=100)
    why = run.why
    try:
        pods = containers(apps, NAME)
        generation = apps.get(NAME)["metadata"]["generation"]
        good_env = apps.get(NAME)["spec"]["template"]["env"]

        # 1. The schema refuses: a clear error naming the field, nothing stored.
        error = patch(kubectl, {"scaling": {"learnerPromotion": "lazy"}}, ok=False)
        assert "spec.scaling.learnerPromotion" in error, error
        assert '"lazy"' in error, error
        assert apps.get(NAME)["metadata"]["generation"] == generation

        # 2. The schema accepts, the operator refuses: said in Degraded and an event.
        bad = {"name": "SEGUE_NOTE", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}
        patch(kubectl, {"template": {"env": [*good_env, bad]}})
        edited = time.monotonic()
        took = wait_for("Degraded: InvalidSpec", lambda: degraded(apps, NAME), 30, why)
        found = degraded(apps, NAME)
        assert found is not None
        reason, message = found
        assert reason == "InvalidSpec", found
        assert f"spec.template.env[{len(good_env)}]" in message, message
        assert "value or valueFrom" in message, message
        wait_event(apps, NAME, "InvalidSpec", message)
        # The other conditions stay as last decided (the app is still balanced).
        conditions = {c["type"]: c for c in apps.get(NAME)["status"]["conditions"]}
        assert conditions["Balanced"]["status"] == "True", conditions
        # The app keeps running on its last good spec: every task commits after the
        # edit, and no pod is replaced or restarted.
        kept_going = run.resumed(edited)
        time.sleep(3)
        assert degraded(apps, NAME) == found
        assert containers(apps, NAME) == pods
        for pod in apps.pods(NAME).values():
            assert "SEGUE_NOTE" not in str(pod.spec.containers[0].env)

        # 3. Fixing the edit clears the condition; the app is balanced again.
        patch(kubectl, {"template": {"env": good_env}})
        fixed = wait_for(
            "Degraded cleared, balanced",
            lambda: degraded(apps, NAME) is None and apps.balanced(NAME, 2),
            60,
            why,
        )
        assert containers(apps, NAME) == pods
    finally:
        run.stop()
    run.finish()
    stall = run.assert_no_stall()
    print(
        f"\nbad edit: the schema refused it; the operator said InvalidSpec {took:.1f}s after "
        f"the edit, every task committed again {kept_going:.1f}s after it; fixed -> Degraded "
        f"cleared and balanced in {fixed:.1f}s; longest stall {stall:.1f}s; "
        f"{sum(run.sent.values())} lines exact; owner overlaps "
        f"{[(o.task, round(o.seconds, 2)) for o in run.owners.overlaps]}"
    )
