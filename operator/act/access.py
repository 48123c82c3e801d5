"""The workers' access: a ServiceAccount, a Role that names exactly the objects the pods
may touch, its RoleBinding, and the Kafka Streams plugin's group ConfigMap.

Least privilege by ``resourceNames``: a pod reads its own app's assignment ConfigMap and,
for ``runtime: kafka-streams``, updates its own group ConfigMap; no app can see another's
placement. ``actor.ensure_access`` applies these once per app generation; the pods and
the assignment are built in :mod:`.objects`.
"""

from __future__ import annotations

from typing import Any

from segue.operator.act.objects import metadata
from segue.operator.api.names import worker_account
from segue.protocol.names import assignment_configmap, group_configmap


def service_account(app: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(worker_account(app), app, uid),
    }


def role(app: str, uid: str, runtime: str = "segue") -> dict[str, Any]:
    """Exactly what a worker needs: read and watch its app's assignment ConfigMap; a
    Kafka Streams app's plugin also updates its own group ConfigMap (the report), and
    nothing else: ``resourceNames`` names both, so an app never sees another's placement."""
    rules: list[dict[str, Any]] = [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [assignment_configmap(app)],
            "verbs": ["get", "list", "watch"],
        }
    ]
    if runtime == "kafka-streams":
        rules.append(
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": [group_configmap(app)],
                "verbs": ["get", "patch"],
            }
        )
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": metadata(worker_account(app), app, uid),
        "rules": rules,
    }


def group(app: str, uid: str) -> dict[str, Any]:
    """The empty group ConfigMap a Kafka Streams app's plugin reports into: created by
    the operator (a Role cannot allow ``create`` by name) and owned by the app."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(group_configmap(app), app, uid),
    }


def role_binding(app: str, uid: str, namespace: str) -> dict[str, Any]:
    name = worker_account(app)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata(name, app, uid),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
