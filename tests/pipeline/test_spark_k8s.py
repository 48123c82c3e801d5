"""``segue simulate`` on Spark on Kubernetes: the local control plane starts the executor
pods and the pod runner runs them through the Spark image's entry point.

The pod runner runs no images, so the executor pod template gives the command the
image's ENTRYPOINT names (images/spark/entrypoint.sh) and the environment the image
sets; everything else is Spark's own: the driver (client mode, this machine) creates
the executor pods through the API server, they start ``KubernetesExecutorBackend``,
register with the driver and run the Python work. Results must equal a single process's.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from segue.pipeline.catalog import parse
from segue.pipeline.evaluate import evaluate_all
from segue.pipeline.fleet import fleet
from segue.pipeline.rows import ScenarioRow
from segue.pipeline.spark import session
from segue.stack import KubeControlPlane
from segue.stack.kubelet import PodRunner
from segue.stack.localstack import NODE_NAME

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "images" / "spark" / "entrypoint.sh"


def driver_token(kube_api: object, namespace: str) -> str:
    """A token of a ServiceAccount that may manage the namespace's pods (the driver's).

    fabric8, Spark's Kubernetes client, reads no EC client keys, so the driver logs in
    with a token, as a driver pod would with its ServiceAccount's."""
    core, rbac = client.CoreV1Api(kube_api), client.RbacAuthorizationV1Api(kube_api)
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="spark"))
    )
    rbac.create_namespaced_role_binding(
        namespace,
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="spark"),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="edit"
            ),
            subjects=[
                client.RbacV1Subject(kind="ServiceAccount", name="spark", namespace=namespace)
            ],
        ),
    )
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    return str(
        core.create_namespaced_service_account_token("spark", namespace, request).status.token
    )


def parquet(path: Path) -> list[dict[str, object]]:
    spark = session.build(None)
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(path)).collect()]


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_executors_run_as_pods_through_the_image_entry_point(
    kube: KubeControlPlane, kube_api: object, pod_runner: PodRunner, namespace: str, tmp_path: Path
) -> None:
    template = tmp_path / "executor.yaml"
    bin_dir = str(Path(sys.executable).parent)
    template.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "spec": {
                    "nodeName": NODE_NAME,
                    "hostNetwork": True,
                    "containers": [
                        {
                            "name": "executor",
                            "command": [str(ENTRYPOINT)],
                            "env": [
                                {"name": "PATH", "value": f"{bin_dir}:/usr/bin:/bin"},
                                {"name": "SEGUE_SPARK_JARS", "value": str(session.cached_jars())},
                            ],
                        }
                    ],
                },
            }
        )
    )
    confs = {
        "spark.kubernetes.authenticate.caCertFile": str(kube.ca_file),
        "spark.kubernetes.authenticate.oauthToken": driver_token(kube_api, namespace),
        "spark.kubernetes.namespace": namespace,
        "spark.kubernetes.container.image": "segue-spark:test",
        "spark.kubernetes.executor.podTemplateFile": str(template),
        "spark.executor.instances": "1",
        "spark.executor.memory": "512m",
        "spark.kubernetes.executor.request.cores": "100m",
        "spark.kubernetes.executor.deleteOnTermination": "false",  # to be seen below
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "segue",
        "simulate",
        "--synthetic",
        "2",
        "--seed",
        "1",
        "--policies",
        "eager",
        "--out",
        str(out),
        "--master",
        f"k8s://https://{kube.host}:{kube.port}",
        *(f"--conf={k}={v}" for k, v in confs.items()),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert "2 scenarios x 1 policies" in done.stdout
    pods = client.CoreV1Api(kube_api).list_namespaced_pod(
        namespace, label_selector="spark-role=executor"
    )
    assert len(pods.items) == 1, [p.metadata.name for p in pods.items]
    assert pods.items[0].spec.containers[0].args == ["executor"]
    rows = [
        ScenarioRow("synthetic(n=2,seed=1)", i + 1, s.model_dump_json())
        for i, s in enumerate(fleet(2, 1))
    ]
    expected = [asdict(r) for r in evaluate_all(rows, parse("eager"))]
    assert sorted(parquet(out / "results"), key=str) == sorted(expected, key=str)
