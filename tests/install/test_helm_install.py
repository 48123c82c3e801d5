"""Segue installed the way users install it: ``helm install`` of charts/segue into the
local stack's API server. The operator runs from the Deployment the chart rendered
(two replicas, one holding the lease; the pod runner runs the rendered command with
the pods' own ServiceAccount token), picks up a StreamApp applied with kubectl and
scales it 2 -> 3 through learners with every count exact; ``helm upgrade`` of a value
rolls the operator while the app keeps processing; ``helm uninstall`` removes the
operator and leaves the running StreamApp, its pods and its data alone."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.names import PUBLISHED_BY
from segue.protocol.names import assignment_configmap
from segue.stack.apps import Apps, text_input
from segue.stack.paths import Binaries
from tests.operator.e2e import wait_for
from tests.operator.test_e2e_scaling import assert_exact, merge, prefill, wordcount

from .conftest import CHART, helm

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SEGUE = str(Path(sys.executable).with_name("segue"))  # what the image's PATH would find


def kubectl(kube: Any, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(Binaries.locate().kubectl), "--kubeconfig", str(kube.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
    return result.stdout


def operator_pods(core: Any, namespace: str, release: str) -> list[Any]:
    pods = core.list_namespaced_pod(
        namespace, label_selector=f"app.kubernetes.io/instance={release}"
    ).items
    return [p for p in pods if not p.metadata.deletion_timestamp]


def ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def operator_logs(runner: Any, pods: list[Any]) -> str:
    text = []
    for pod in pods:
        name, uid = pod.metadata.name, pod.metadata.uid
        container = pod.spec.containers[0].name
        path = runner.log_path(pod.metadata.namespace, name, uid, container)
        if path and path.exists():
            text.append(f"--- {name}\n{path.read_text(errors='replace')[-4000:]}")
    return "\n".join(text)


def test_helm_install_scale_upgrade_uninstall(
    kube: Any, kube_api: Any, kafka: Any, pod_runner: Any, spaces: dict[str, str]
) -> None:
    release_ns, watched = spaces["release"], spaces["watched"]
    release = f"segue-{release_ns}"  # cluster-scoped names must not clash across tests
    core, apps = client.CoreV1Api(kube_api), Apps(kube_api, watched)
    helm(
        kube, "install", release, str(CHART), "-n", release_ns, "--wait", "--timeout", "180s",
        "--set", f"command={{{SEGUE}}}",
        "--set", f"watchNamespaces={{{watched}}}",
        "--set-json", "settings.busyInterval=0.3",
        "--set", "leaderElection.leaseDuration=6,leaderElection.renewDeadline=4",
        "--set", "leaderElection.retryPeriod=1",
    )  # fmt: skip
    pods = operator_pods(core, release_ns, release)
    assert len(pods) == 2, [p.metadata.name for p in pods]

    def why() -> str:
        return f"status: {apps.status('wc')}\n" + operator_logs(
            pod_runner, operator_pods(core, release_ns, release)
        )

    leases = client.CoordinationV1Api(kube_api).list_namespaced_lease(release_ns).items
    holders = {lease.spec.holder_identity for lease in leases}
    assert len(holders & {p.metadata.name for p in pods}) == 1, holders  # exactly one acts

    body, source, output = wordcount(kafka, "wc", 2)
    kubectl(kube, "apply", "-n", watched, "-f", "-", stdin=yaml.safe_dump(body))
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 180, why)
    before = prefill(kafka, source, 3000)
    producer = text_input(kafka.bootstrap_servers, source, words=60, rate=150)
    producer.start()
    try:
        time.sleep(2)
        kubectl(kube, "scale", "-n", watched, "streamapp/wc", "--replicas=3")
        took = wait_for("3 pods balanced", lambda: apps.balanced("wc", 3), 180, why)
        publisher = core.read_namespaced_config_map(
            assignment_configmap("wc"), watched
        ).metadata.annotations[PUBLISHED_BY]
        assert publisher in {p.metadata.name for p in pods}  # the Deployment's pod acted
        reasons = {reason for reason, _ in apps.events("wc")}
        assert {"LearnersAssigned", "TaskHandedOver"} <= reasons  # through learners
        assert "ScaleDownTimeout" not in reasons

        # helm upgrade with a changed value: the operator rolls, the app runs on.
        old = {p.metadata.name for p in pods}
        helm(
            kube, "upgrade", release, str(CHART), "-n", release_ns, "--reuse-values",
            "--set", "logLevel=debug", "--wait", "--timeout", "180s",
        )  # fmt: skip
        wait_for(
            "the operator rolled to the new value",
            lambda: rolled(core, release_ns, release, old),
            180,
            why,
        )
        assert apps.balanced("wc", 3)

        # helm uninstall: the operator goes, the app and its data stay and keep working.
        helm(kube, "uninstall", release, "-n", release_ns, "--wait", "--timeout", "120s")
        wait_for("the operator gone", lambda: not operator_pods(core, release_ns, release), 60, why)
        time.sleep(3)  # input keeps flowing with no operator at all
    finally:
        sent = merge(before, producer.stop())
    assert apps.exists("wc")
    assert len([p for p in apps.pods("wc").values() if ready(p)]) == 3
    assert apps.configmaps("wc")
    assert_exact(kafka, output, sent)
    ext = client.ApiextensionsV1Api(kube_api)
    assert ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}")  # CRDs are never removed
    print(f"helm-installed operator: 2->3 balanced in {took:.1f}s, {sum(sent.values())} exact")
    # No operator is left to take its finalizer off: do it, as docs/install.md says.
    client.CustomObjectsApi(kube_api).patch_namespaced_custom_object(
        GROUP, VERSION, watched, PLURAL, "wc", {"metadata": {"finalizers": None}}
    )


def rolled(core: Any, namespace: str, release: str, old: set[str]) -> bool:
    pods = operator_pods(core, namespace, release)
    fresh = [p for p in pods if p.metadata.name not in old]
    return (
        len(pods) == 2
        and len(fresh) == 2
        and all(ready(p) for p in fresh)
        and all("--log-level=debug" in p.spec.containers[0].args for p in fresh)
    )
