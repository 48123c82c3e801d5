"""The fleet benchmark's cluster setup: the operator's own identity, so its API requests
can be counted apart from everyone else's, and the Kafka topics of N apps.

The API server counts requests per FlowSchema (API Priority and Fairness), not per
client. So the operator runs as a ServiceAccount (as it does in a cluster, from the
chart), bound to ``cluster-admin``, through a FlowSchema of its own that sends it to
``workload-low``, the priority level any ServiceAccount gets by default
(``service-accounts``). ``apiserver_flowcontrol_dispatched_requests_total`` for that
FlowSchema is then exactly the operator's requests, watches included.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

FLOW_SCHEMA = "segue-operator-bench"
SA_NAMESPACE = "segue-system"
SA_NAME = "segue-operator"


ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def fleet_stack() -> Iterator[tuple[Any, Any]]:
    """Kafka and the Kubernetes control plane with the StreamApp CRD, and an admin API
    client; no pod runner: ``stubpods`` is the only kubelet, so it binds every pod."""
    from kubernetes import config, utils

    from segue.stack.localstack import LocalStack

    with LocalStack(with_pods=False) as stack:
        assert stack.kube is not None
        api = config.new_client_from_config(config_file=str(stack.kube.kubeconfig))
        try:
            utils.create_from_yaml(api, str(ROOT / "crds" / "streamapp.yaml"))
            time.sleep(2)
            yield stack, api
        finally:
            api.close()


def operator_identity(api: Any, server: str, ca_file: Path, out: Path) -> Path:
    """A ServiceAccount with cluster-admin and its own FlowSchema; a kubeconfig with its
    token (valid 3 h) written to ``out``."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    custom = client.CustomObjectsApi(api)

    def create(call: Any, *args: Any) -> None:
        try:
            call(*args)
        except ApiException as exc:
            if exc.status != 409:
                raise

    create(core.create_namespace, {"metadata": {"name": SA_NAMESPACE}})
    create(
        core.create_namespaced_service_account,
        SA_NAMESPACE,
        {"metadata": {"name": SA_NAME}},
    )
    create(
        rbac.create_cluster_role_binding,
        {
            "metadata": {"name": f"{SA_NAME}-bench"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": SA_NAME, "namespace": SA_NAMESPACE}],
        },
    )
    everything = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    create(
        custom.create_cluster_custom_object,
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "flowschemas",
        {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": FLOW_SCHEMA},
            "spec": {
                "matchingPrecedence": 500,  # before service-accounts (9000)
                "priorityLevelConfiguration": {"name": "workload-low"},
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [
                    {
                        "subjects": [
                            {
                                "kind": "ServiceAccount",
                                "serviceAccount": {"name": SA_NAME, "namespace": SA_NAMESPACE},
                            }
                        ],
                        "resourceRules": [
                            {**everything, "namespaces": ["*"], "clusterScope": True}
                        ],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    }
                ],
            },
        },
    )
    request = {"spec": {"audiences": [], "expirationSeconds": 3 * 3600}}
    for _ in range(20):  # the token controller may not have the account yet
        try:
            token: Any = core.create_namespaced_service_account_token(
                SA_NAME,
                SA_NAMESPACE,
                request,  # type: ignore[arg-type]  # the client takes plain dicts too
            )
            break
        except ApiException:
            time.sleep(0.5)
    else:
        raise RuntimeError("no token for the operator's ServiceAccount")
    out.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: fleet
  cluster: {{server: "{server}", certificate-authority: "{ca_file}"}}
users:
- name: {SA_NAME}
  user: {{token: "{token.status.token}"}}
contexts:
- name: fleet
  context: {{cluster: fleet, user: {SA_NAME}}}
current-context: fleet
"""
    )
    return out


def operator_requests(api: Any) -> float:
    """The operator's API requests so far (its FlowSchema's dispatched counter)."""
    reply = api.call_api("GET", f"{api.configuration.host}/metrics")
    reply.read()
    total = 0.0
    for family in text_string_to_metric_families(reply.data.decode()):
        if family.name != "apiserver_flowcontrol_dispatched_requests":
            continue
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels.get("flow_schema") == FLOW_SCHEMA:
                total += sample.value
    return total


def create_topics(bootstrap: str, topics: list[str], partitions: int) -> None:
    """Create ``topics`` (those that exist are kept), in batches the broker takes quickly."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=30).topics)
    wanted = [t for t in topics if t not in existing]
    for start in range(0, len(wanted), 100):
        batch = [NewTopic(t, partitions, 1) for t in wanted[start : start + 100]]
        for future in admin.create_topics(batch, operation_timeout=60).values():
            future.result()
