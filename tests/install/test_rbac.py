"""Least privilege, proven against the real API server: the chart's RBAC, applied as
rendered, lets the operator's ServiceAccount do each thing docs/install.md says it
needs and answers 403 to a list of things it must not do; the worker ServiceAccount
the operator makes per app reads its own assignment and nothing else; and the per-app
Role the operator writes passes the API server's escalation check without
``escalate`` or ``bind`` (the operator holds everything it grants)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, utils

from segue.operator.act import access, objects
from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.names import worker_account
from segue.protocol.names import MANAGED_BY, MANAGER, assignment_configmap

from .conftest import flag, render, status_of

pytestmark = pytest.mark.timeout(180)
CLUSTER_KINDS = {"ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy",
                 "ValidatingAdmissionPolicyBinding"}  # fmt: skip
RBAC_KINDS = {"ServiceAccount", "Role", "RoleBinding", *CLUSTER_KINDS}


@pytest.fixture
def installed_rbac(
    kube: Any, kube_api: Any, spaces: dict[str, str], streamapp_crd: Any
) -> Iterator[tuple[str, str]]:
    """The chart's RBAC in namespaced mode, applied as rendered: (the operator's
    ServiceAccount, its lease's name)."""
    release = f"segue-{spaces['release']}"
    docs = render(kube, spaces["release"], release, f"watchNamespaces={{{spaces['watched']}}}")
    mine = [d for d in docs if d["kind"] in RBAC_KINDS]
    assert {"ServiceAccount", "Role", "RoleBinding"} <= {d["kind"] for d in mine}
    for doc in mine:
        utils.create_from_dict(kube_api, doc, namespace=spaces["release"])
    account = next(d["metadata"]["name"] for d in mine if d["kind"] == "ServiceAccount")
    time.sleep(1)  # RBAC and admission policies are read through informers
    yield account, flag(docs, "lease-name")
    for doc in mine:
        if doc["kind"] in CLUSTER_KINDS:
            delete_cluster_object(kube_api, doc)


def delete_cluster_object(api: Any, doc: dict[str, Any]) -> None:
    name, kind = doc["metadata"]["name"], doc["kind"]
    if kind.startswith("Cluster"):
        rbac = client.RbacAuthorizationV1Api(api)
        method = (
            rbac.delete_cluster_role if kind == "ClusterRole" else rbac.delete_cluster_role_binding
        )
    else:
        admission = client.AdmissionregistrationV1Api(api)
        method = (
            admission.delete_validating_admission_policy
            if kind == "ValidatingAdmissionPolicy"
            else admission.delete_validating_admission_policy_binding
        )
    status_of(lambda: method(name))


def pod(name: str, managed: bool) -> dict[str, Any]:
    """A pod nothing will run (no node matches), labelled as the operator's or not."""
    labels = {MANAGED_BY: MANAGER, "segue.dev/app": "x"} if managed else {"team": "data"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "nodeSelector": {"segue.dev/nowhere": "true"},
            "containers": [{"name": "c", "image": "segue", "command": ["true"]}],
        },
    }


def test_the_operator_may_do_what_it_needs_and_nothing_more(
    kube_api: Any,
    spaces: dict[str, str],
    installed_rbac: tuple[str, str],
    impersonate: Callable[[str, str], Any],
) -> None:
    release, watched, other = spaces["release"], spaces["watched"], spaces["other"]
    account, lease_name = installed_rbac
    admin_core = client.CoreV1Api(kube_api)
    admin_core.create_namespaced_secret(
        watched, client.V1Secret(metadata=client.V1ObjectMeta(name="kafka"), string_data={"k": "v"})
    )
    admin_core.create_namespaced_secret(
        other, client.V1Secret(metadata=client.V1ObjectMeta(name="kafka"), string_data={"k": "v"})
    )
    admin_core.create_namespaced_pod(watched, pod("not-ours", managed=False))
    client.CoordinationV1Api(kube_api).create_namespaced_lease(
        release, {"metadata": {"name": "another"}, "spec": {}}
    )
    as_op = impersonate(release, account)
    core, rbac = client.CoreV1Api(as_op), client.RbacAuthorizationV1Api(as_op)
    custom, coord = client.CustomObjectsApi(as_op), client.CoordinationV1Api(as_op)
    ext = client.ApiextensionsV1Api(as_op)
    app = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "StreamApp",
        "metadata": {"name": "wc"},
        "spec": {"applicationId": "wc", "kafka": {"bootstrapServers": "k:9092"},
                 "template": {"image": "segue"}},
    }  # fmt: skip
    client.CustomObjectsApi(kube_api).create_namespaced_custom_object(
        GROUP, VERSION, watched, PLURAL, app
    )
    uid = client.CustomObjectsApi(kube_api).get_namespaced_custom_object(
        GROUP, VERSION, watched, PLURAL, "wc"
    )["metadata"]["uid"]
    cm = objects.assignment("wc", uid, 1, b"{}", "test")
    event = {
        "metadata": {"name": "wc.test"},
        "involvedObject": {"kind": "StreamApp", "name": "wc", "namespace": watched},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
    }
    lease = {"metadata": {"name": lease_name}, "spec": {"holderIdentity": "x"}}
    allowed: dict[str, Callable[[], object]] = {
        "list streamapps": lambda: custom.list_namespaced_custom_object(
            GROUP, VERSION, watched, PLURAL
        ),
        "patch streamapps": lambda: custom.patch_namespaced_custom_object(
            GROUP, VERSION, watched, PLURAL, "wc", {"metadata": {"annotations": {"t": "x"}}}
        ),
        "patch streamapps/status": lambda: custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, watched, PLURAL, "wc", {"status": {"phase": "Pending"}}
        ),
        "create its pod": lambda: core.create_namespaced_pod(watched, pod("wc-0", managed=True)),
        "list pods": lambda: core.list_namespaced_pod(watched),
        "delete its pod": lambda: core.delete_namespaced_pod("wc-0", watched),
        "create a claim": lambda: core.create_namespaced_persistent_volume_claim(
            watched, objects.state_claim("wc", uid, "wc-0", _claimed_spec())
        ),
        "delete a claim": lambda: core.delete_namespaced_persistent_volume_claim(
            "state-wc-0", watched
        ),
        "create the assignment": lambda: core.create_namespaced_config_map(watched, cm),
        "read the assignment": lambda: core.read_namespaced_config_map(
            assignment_configmap("wc"), watched
        ),
        "read the app's Kafka secret": lambda: core.read_namespaced_secret("kafka", watched),
        "create the worker account": lambda: core.create_namespaced_service_account(
            watched, access.service_account("wc", uid)
        ),
        # The escalation check: the operator holds what the worker Role grants.
        "create the worker role": lambda: rbac.create_namespaced_role(
            watched, access.role("wc", uid)
        ),
        "bind the worker role": lambda: rbac.create_namespaced_role_binding(
            watched, access.role_binding("wc", uid, watched)
        ),
        "post an event": lambda: core.create_namespaced_event(watched, event),
        "create its lease": lambda: coord.create_namespaced_lease(release, lease),
        "renew its lease": lambda: coord.replace_namespaced_lease(
            lease_name, release, coord.read_namespaced_lease(lease_name, release)
        ),
        "list CRDs": ext.list_custom_resource_definition,
    }
    for what, call in allowed.items():
        assert status_of(call) == 200, f"the operator may not {what}"

    forbidden: dict[str, Callable[[], object]] = {
        "read another namespace's secret": lambda: core.read_namespaced_secret("kafka", other),
        "list secrets": lambda: core.list_namespaced_secret(watched),
        "list pods elsewhere": lambda: core.list_namespaced_pod(other),
        "create pods elsewhere": lambda: core.create_namespaced_pod(other, pod("x", True)),
        "delete a pod it does not own": lambda: core.delete_namespaced_pod("not-ours", watched),
        "create a pod it does not own": lambda: core.create_namespaced_pod(
            watched, pod("sneaky", managed=False)
        ),
        "list nodes": core.list_node,
        "create a lease elsewhere": lambda: coord.create_namespaced_lease(watched, lease),
        # (create cannot be limited by name in RBAC; update and get can)
        "renew another lease": lambda: coord.replace_namespaced_lease(
            "another", release, {"metadata": {"name": "another"}, "spec": {}}
        ),
        "grant itself secrets": lambda: rbac.create_namespaced_role(
            watched,
            {
                "metadata": {"name": "more"},
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
            },
        ),
        "bind cluster-admin": lambda: rbac.create_namespaced_role_binding(
            watched,
            {
                "metadata": {"name": "admin"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "cluster-admin",
                },
                "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": release}],
            },
        ),
        "create a ClusterRole": lambda: rbac.create_cluster_role(
            {"metadata": {"name": f"x-{release}"}, "rules": []}
        ),
        "delete a namespace": lambda: core.delete_namespace(other),
        "write the CRD": lambda: ext.delete_custom_resource_definition(f"{PLURAL}.{GROUP}"),
    }
    answers = {what: status_of(call) for what, call in forbidden.items()}
    assert answers == dict.fromkeys(forbidden, 403)


def _claimed_spec() -> Any:
    from segue.operator.api import StreamAppSpec

    return StreamAppSpec.model_validate(
        {
            "applicationId": "wc",
            "kafka": {"bootstrapServers": "k:9092"},
            "template": {"image": "segue"},
            "state": {"volumeClaim": {"size": "1Gi"}},
        }
    )


def test_a_worker_reads_its_own_assignment_and_nothing_else(
    kube_api: Any, namespace: str, impersonate: Callable[[str, str], Any]
) -> None:
    admin = client.CoreV1Api(kube_api)
    for app in ("wc", "other"):
        for body in (
            access.service_account(app, "u"),
            objects.assignment(app, "u", 1, b"{}", "t"),
        ):
            body["metadata"].pop("ownerReferences")  # no StreamApp here: keep them standalone
            utils.create_from_dict(kube_api, body, namespace=namespace)
        for body in (access.role(app, "u"), access.role_binding(app, "u", namespace)):
            body["metadata"].pop("ownerReferences")
            utils.create_from_dict(kube_api, body, namespace=namespace)
    admin.create_namespaced_secret(
        namespace,
        client.V1Secret(metadata=client.V1ObjectMeta(name="kafka"), string_data={"k": "v"}),
    )
    time.sleep(1)
    core = client.CoreV1Api(impersonate(namespace, worker_account("wc")))
    mine = assignment_configmap("wc")
    allowed = {
        "read its assignment": lambda: core.read_namespaced_config_map(mine, namespace),
        "watch its assignment": lambda: core.list_namespaced_config_map(
            namespace,
            field_selector=f"metadata.name={mine}",
            watch=True,
            timeout_seconds=1,
            _preload_content=False,  # a stream, not a list
        ).release_conn(),
    }
    for what, call in allowed.items():
        assert status_of(call) == 200, f"the worker may not {what}"
    forbidden = {
        "read another app's assignment": lambda: core.read_namespaced_config_map(
            assignment_configmap("other"), namespace
        ),
        "write its assignment": lambda: core.patch_namespaced_config_map(
            mine, namespace, {"data": {"generation": "99"}}
        ),
        "list every ConfigMap": lambda: core.list_namespaced_config_map(namespace),
        "read a secret": lambda: core.read_namespaced_secret("kafka", namespace),
        "list pods": lambda: core.list_namespaced_pod(namespace),
        "list nodes": core.list_node,
    }
    answers = {what: status_of(call) for what, call in forbidden.items()}
    assert answers == dict.fromkeys(forbidden, 403)
