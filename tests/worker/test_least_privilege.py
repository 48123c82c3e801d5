"""The worker reads its assignment with least privilege: a ServiceAccount whose
Role allows get/list/watch on one ConfigMap, by name, and nothing else."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config

from .harness import create_topics, produce, read_committed

pytestmark = pytest.mark.worker


def worker_service_account(kube_api: Any, namespace: str, configmap: str) -> None:
    """ServiceAccount ``worker`` with a Role on exactly one ConfigMap, read-only."""
    core, rbac = client.CoreV1Api(kube_api), client.RbacAuthorizationV1Api(kube_api)
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="worker"))
    )
    rbac.create_namespaced_role(
        namespace,
        client.V1Role(
            metadata=client.V1ObjectMeta(name="worker"),
            rules=[
                client.V1PolicyRule(
                    api_groups=[""],
                    resources=["configmaps"],
                    resource_names=[configmap],
                    verbs=["get", "list", "watch"],
                )
            ],
        ),
    )
    rbac.create_namespaced_role_binding(
        namespace,
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="worker"),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="Role", name="worker"
            ),
            subjects=[
                client.RbacV1Subject(kind="ServiceAccount", name="worker", namespace=namespace)
            ],
        ),
    )


def service_account_kubeconfig(
    kube: Any, kube_api: Any, namespace: str, configmap: str, path: Path
) -> Path:
    worker_service_account(kube_api, namespace, configmap)
    core = client.CoreV1Api(kube_api)
    token = core.create_namespaced_service_account_token(
        "worker",
        namespace,
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
        ),
    ).status.token
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "worker",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": kube.server,
                            "certificate-authority": str(kube.ca_file),
                        },
                    }
                ],
                "users": [{"name": "worker", "user": {"token": token}}],
                "contexts": [
                    {
                        "name": "worker",
                        "context": {"cluster": "c", "user": "worker", "namespace": namespace},
                    }
                ],
            }
        )
    )
    return path


def test_worker_runs_with_a_role_limited_to_its_configmap(  # noqa: PLR0917 (fixtures)
    kafka: Any, kube: Any, kube_api: Any, namespace: str, spawn: Any, assign: Any, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 1, output: 1})
    configmap = f"{app_id}-assignment"
    kubeconfig = service_account_kubeconfig(
        kube, kube_api, namespace, configmap, tmp_path / "worker.kubeconfig"
    )
    assign(configmap, app_id, 1, {"w0": {"active": ["0_0"]}})
    assign("someone-elses", app_id, 1, {"w0": {}})

    limited = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
    with pytest.raises(client.ApiException) as denied:
        limited.read_namespaced_config_map("someone-elses", namespace)
    assert denied.value.status == 403
    with pytest.raises(client.ApiException) as denied:
        limited.list_namespaced_config_map(namespace)  # no field selector: not allowed
    assert denied.value.status == 403

    args = {"application_id": app_id, "input": source, "output": output}
    w0 = spawn(
        "segue.worker.apps.tally:topology", "w0", configmap, app_args=args, kubeconfig=kubeconfig
    )
    w0.wait_ready()
    assign(configmap, app_id, 2, {"w0": {"learning": ["0_0"]}})  # the watch sees changes too
    w0.wait_generation(2)
    assign(configmap, app_id, 3, {"w0": {"active": ["0_0"]}})
    w0.wait_generation(3)
    w0.wait_ready()
    produce(kafka.bootstrap_servers, source, [("k", "v")] * 10)
    assert len(read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= 10)) == 10
