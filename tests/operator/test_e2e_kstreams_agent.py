"""A Kafka Streams app whose agent jar is not where the operator's flags say: an operator
given the agent image but left at ``--kstreams-agent-jar``'s default, the image's
``/opt/segue/segue-kstreams.jar``, which this machine does not have. The pods'
``segue-agent`` init container fails, and the status says ``Degraded`` ``AgentMissing``,
naming the pods, the jar and the flag, with a Warning event. The operator started again
with the right jar (what a ``helm upgrade`` of its flags does) replaces those pods at once,
since the agent is part of the template hash, and the app runs balanced on the new ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue.operator.image import KSTREAMS_AGENT_JAR, KSTREAMS_AGENT_JAR_ENV
from segue.stack.apps import Apps
from tests.kstreams import app as kstreams_app
from tests.operator.test_e2e_health import degraded

from .e2e import OperatorProcess, wait_event, wait_for
from .test_e2e_kstreams import SMALL_JVM, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.kstreams, pytest.mark.timeout(600)]


def test_a_missing_agent_jar_is_said_and_a_fixed_flag_replaces_the_stuck_pods(  # noqa: PLR0917 (fixtures)
    kafka: Any,
    kube: Any,
    namespace: str,
    apps: Apps,
    pod_runner: Any,
    tmp_path: Path,
    streamapp_crd: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jar, classpath = kstreams_app.build()
    monkeypatch.delenv(KSTREAMS_AGENT_JAR_ENV, raising=False)  # the default: the image's path
    agent = ("--kstreams-agent-image", "segue:dev")
    wrong = OperatorProcess(kube.kubeconfig, namespace, tmp_path, *agent, name="wrong").start()
    try:
        body, _, _ = wordcount(kafka, tmp_path, classpath, java_options=SMALL_JVM)
        apps.create(body)

        def why() -> str:
            return f"{wrong.logs()[-3000:]}\n{apps.get('kwc').get('status')}"

        # Each pod's init container fails on its own clock: the status names the first
        # as soon as it fails, and every stuck pod once each has.
        said = wait_for(
            "Degraded: AgentMissing",
            lambda: (degraded(apps, "kwc") or ("",))[0] == "AgentMissing",
            90,
            why,
        )
        named = "kwc-0, kwc-1 cannot start: "
        both = wait_for(
            "AgentMissing naming both pods",
            lambda: (degraded(apps, "kwc") or ("", ""))[1].startswith(named),
            30,
            why,
        )
        reason, message = degraded(apps, "kwc") or ("", "")
        assert reason == "AgentMissing", (reason, message)
        assert KSTREAMS_AGENT_JAR in message, message
        assert "--kstreams-agent-jar" in message, message
        wait_event(apps, "kwc", "AgentMissing")
        stuck = apps.pods("kwc")
        assert sorted(stuck) == ["kwc-0", "kwc-1"]
        assert {p.status.phase for p in stuck.values()} == {"Pending"}
    finally:
        wrong.stop()

    fixed = OperatorProcess(
        kube.kubeconfig, namespace, tmp_path, *agent, "--kstreams-agent-jar", str(jar), name="fixed"
    ).start()
    try:
        took = wait_for(
            "2 pods balanced",
            lambda: apps.balanced("kwc", 2),
            240,
            lambda: f"{fixed.logs()[-3000:]}\n{apps.get('kwc').get('status')}",
        )
        pods = apps.pods("kwc")
        assert sorted(pods) == ["kwc-0", "kwc-1"]
        for name, pod in pods.items():  # replaced, not waited on
            assert pod.metadata.uid != stuck[name].metadata.uid, name
            assert pod.spec.init_containers[0].command[1] == str(jar)
        assert degraded(apps, "kwc") is None
    finally:
        fixed.stop()
    print(f"AgentMissing said {said:.1f}s after the apply, naming both pods {both:.1f}s after")
    print(message)
    print(f"balanced {took:.1f}s after the operator started with the right jar")
