"""The local control plane is a real Kubernetes: CRDs, RBAC, garbage collection."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.smoke


def eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def test_crd_and_object_round_trip(kube_api: client.ApiClient, namespace: str) -> None:
    ext = client.ApiextensionsV1Api(kube_api)
    group, plural = "smoke.segue.dev", "widgets"
    crd = client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name=f"{plural}.{group}"),
        spec=client.V1CustomResourceDefinitionSpec(
            group=group,
            scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(
                plural=plural, singular="widget", kind="Widget"
            ),
            versions=[
                client.V1CustomResourceDefinitionVersion(
                    name="v1",
                    served=True,
                    storage=True,
                    schema=client.V1CustomResourceValidation(
                        open_apiv3_schema=client.V1JSONSchemaProps(
                            type="object",
                            properties={
                                "spec": client.V1JSONSchemaProps(
                                    type="object",
                                    required=["size"],
                                    properties={
                                        "size": client.V1JSONSchemaProps(type="integer", minimum=1)
                                    },
                                )
                            },
                        )
                    ),
                )
            ],
        ),
    )
    try:
        ext.create_custom_resource_definition(crd)
    except ApiException as exc:
        if exc.status != 409:
            raise

    def established() -> bool:
        got = ext.read_custom_resource_definition(f"{plural}.{group}")
        return any(
            c.type == "Established" and c.status == "True" for c in got.status.conditions or []
        )

    eventually(established, 30, "the CRD to be established")
    custom = client.CustomObjectsApi(kube_api)
    body = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"size": 3},
    }
    custom.create_namespaced_custom_object(group, "v1", namespace, plural, body)
    got = custom.get_namespaced_custom_object(group, "v1", namespace, plural, "w1")
    assert got["spec"] == {"size": 3}

    bad = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w2"},
        "spec": {"size": 0},
    }
    with pytest.raises(ApiException) as rejected:
        custom.create_namespaced_custom_object(group, "v1", namespace, plural, bad)
    assert rejected.value.status == 422
    assert "spec.size" in rejected.value.body


def test_owned_configmap_is_garbage_collected(kube_api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    owner = core.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner"))
    )
    ref = client.V1OwnerReference(
        api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid
    )
    core.create_namespaced_config_map(
        namespace,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owned", owner_references=[ref])),
    )
    core.delete_namespaced_config_map("owner", namespace)

    def owned_gone() -> bool:
        try:
            core.read_namespaced_config_map("owned", namespace)
        except ApiException as exc:
            return exc.status == 404
        return False

    eventually(owned_gone, 60, "the garbage collector to delete the owned ConfigMap")


def test_rbac_is_enforced_for_service_accounts(kube_api: client.ApiClient, namespace: str) -> None:
    """A ServiceAccount token from the TokenRequest API authenticates, and RBAC
    decides: nothing granted means 403."""
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="reader"))
    )
    token = core.create_namespaced_service_account_token(
        "reader",
        namespace,
        client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[])),
    ).status.token
    config = client.Configuration()
    config.host = kube_api.configuration.host
    config.ssl_ca_cert = kube_api.configuration.ssl_ca_cert
    config.api_key = {"authorization": f"Bearer {token}"}
    as_reader = client.CoreV1Api(client.ApiClient(config))
    with pytest.raises(ApiException) as denied:
        as_reader.list_namespaced_config_map(namespace)
    assert denied.value.status == 403

    rbac = client.RbacAuthorizationV1Api(kube_api)
    rbac.create_namespaced_role(
        namespace,
        client.V1Role(
            metadata=client.V1ObjectMeta(name="cm-reader"),
            rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["list"])],
        ),
    )
    rbac.create_namespaced_role_binding(
        namespace,
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="cm-reader"),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="Role", name="cm-reader"
            ),
            subjects=[
                client.RbacV1Subject(kind="ServiceAccount", name="reader", namespace=namespace)
            ],
        ),
    )

    def allowed() -> bool:
        try:
            as_reader.list_namespaced_config_map(namespace)
        except ApiException:
            return False
        return True

    eventually(allowed, 30, "the RoleBinding to take effect")
