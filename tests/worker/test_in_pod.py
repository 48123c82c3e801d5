"""The worker as the operator will run it: a pod under the pod runner, configured
only through the environment (downward API), reading its assignment with its
ServiceAccount's in-cluster token, state under the pod's mounted state dir,
``/readyz`` and ``/healthz`` probed on the pod's own IP."""

from __future__ import annotations

import sys
import time
import uuid
from typing import Any

import pytest
from kubernetes import client

from segue.stack.kubelet.ipam import is_pod_address

from .harness import create_topics, produce, read_committed
from .test_least_privilege import worker_service_account

pytestmark = pytest.mark.worker

STATE_DIR = "/var/lib/segue/state"


def env(name: str, value: str | None = None, field: str | None = None) -> client.V1EnvVar:
    if field is None:
        return client.V1EnvVar(name=name, value=value)
    return client.V1EnvVar(
        name=name,
        value_from=client.V1EnvVarSource(field_ref=client.V1ObjectFieldSelector(field_path=field)),
    )


def test_worker_runs_as_a_pod(
    kafka: Any, kube_api: Any, pod_runner: Any, namespace: str, assign: Any
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 2})
    configmap = f"{app_id}-assignment"
    worker_service_account(kube_api, namespace, configmap)
    assign(configmap, app_id, 1, {"tally-0": {"active": ["0_0", "0_1"]}})
    probe = {"port": 9400, "period_seconds": 1, "failure_threshold": 3}
    container = client.V1Container(
        name="worker",
        image="segue",
        command=[
            sys.executable,
            "-m",
            "segue",
            "worker",
            "--app",
            "segue.worker.apps.tally:topology",
            "--app-arg",
            f"input={source}",
            "--app-arg",
            f"output={output}",
        ],
        env=[
            env("POD_NAME", field="metadata.name"),
            env("POD_NAMESPACE", field="metadata.namespace"),
            env("POD_IP", field="status.podIP"),
            env("SEGUE_APPLICATION_ID", app_id),
            env("SEGUE_STREAMAPP", app_id),
            env("SEGUE_BOOTSTRAP_SERVERS", kafka.bootstrap_servers),
            env("SEGUE_STATE_DIR", STATE_DIR),
        ],
        volume_mounts=[client.V1VolumeMount(name="state", mount_path=STATE_DIR)],
        readiness_probe=client.V1Probe(
            http_get=client.V1HTTPGetAction(path="/readyz", port=probe["port"]),
            period_seconds=probe["period_seconds"],
        ),
        liveness_probe=client.V1Probe(
            http_get=client.V1HTTPGetAction(path="/healthz", port=probe["port"]),
            period_seconds=probe["period_seconds"],
            failure_threshold=probe["failure_threshold"],
        ),
    )
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="tally-0"),
        spec=client.V1PodSpec(
            service_account_name="worker",
            containers=[container],
            volumes=[client.V1Volume(name="state", empty_dir=client.V1EmptyDirVolumeSource())],
            termination_grace_period_seconds=30,
        ),
    )
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_pod(namespace, pod)

    def ready() -> bool:
        status = core.read_namespaced_pod("tally-0", namespace).status
        return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])

    deadline = time.monotonic() + 90
    while not ready():
        assert time.monotonic() < deadline, core.read_namespaced_pod("tally-0", namespace).status
        time.sleep(0.5)
    status = core.read_namespaced_pod("tally-0", namespace).status
    assert is_pod_address(status.pod_ip), status.pod_ip  # its own: /metrics binds to POD_IP

    produce(kafka.bootstrap_servers, source, [(f"k{i % 7}", "v") for i in range(70)])
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 70)
    assert len(records) == 70
    # A graceful deletion (SIGTERM) stops the worker well within the grace period.
    core.delete_namespaced_pod("tally-0", namespace)

    def gone() -> bool:
        try:
            core.read_namespaced_pod("tally-0", namespace)
        except client.ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    deadline = time.monotonic() + 25
    while not gone():
        assert time.monotonic() < deadline, "the pod did not stop within its grace period"
        time.sleep(0.5)
