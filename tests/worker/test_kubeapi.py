"""``segue.worker.kubeapi``, the worker's list and watch of its assignment ConfigMap, on
the real API server: what a kubeconfig's client certificate may read, the events after
a list's version, a watch the server ends, a watch's error event (410: the watcher lists
again), and a refusal that names who was refused what. A pod's in-cluster
path runs in every end-to-end test and in test_least_privilege.py's Role."""

from __future__ import annotations

import ssl
from typing import Any

import pytest
from kubernetes import client

from segue.worker import kubeapi

pytestmark = pytest.mark.worker


def configmap(name: str, n: int) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"n": str(n)})


def test_list_then_watch_one_configmap_through_a_kubeconfig(
    kube: Any, kube_api: Any, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_config_map(namespace, configmap("a", 1))
    core.create_namespaced_config_map(namespace, configmap("b", 1))
    maps = kubeapi.ConfigMaps(
        kubeapi.from_kubeconfig(kube.kubeconfig), namespace, "metadata.name=a"
    )

    items, version = maps.list(5)
    assert [(i["metadata"]["name"], i["data"]) for i in items] == [("a", {"n": "1"})]
    assert version

    core.replace_namespaced_config_map("b", namespace, configmap("b", 2))
    core.replace_namespaced_config_map("a", namespace, configmap("a", 2))
    events = maps.watch(version, 5)
    kind, obj = next(events)  # the change after the list's version, and only a's
    assert (kind, obj["metadata"]["name"], obj["data"]) == ("MODIFIED", "a", {"n": "2"})
    events.close()

    # the server ends a watch after its timeoutSeconds: the iteration ends, no error
    assert list(maps.watch(obj["metadata"]["resourceVersion"], 1)) == []


def test_a_watch_error_event_raises_its_code() -> None:
    """What ``watch.AssignmentWatcher`` lists again on: the Status of an ERROR event, as
    the API server sends it for a version compacted away."""
    gone = (
        b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},'
        b'"status":"Failure","message":"too old resource version: 1 (4)",'
        b'"reason":"Expired","code":410}}\n'
    )
    with pytest.raises(kubeapi.ApiError, match="too old resource version") as error:
        kubeapi.event(gone)
    assert error.value.status == 410
    assert kubeapi.event(b'{"type":"ADDED","object":{"data":{}}}') == ("ADDED", {"data": {}})


def test_a_refused_list_names_who_and_what(kube: Any, kube_api: Any, namespace: str) -> None:
    """A ServiceAccount with no Role: the 403 carries the API server's own words."""
    core = client.CoreV1Api(kube_api)
    account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="nobody"))
    core.create_namespaced_service_account(namespace, account)
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = core.create_namespaced_service_account_token("nobody", namespace, request)
    admin = kubeapi.from_kubeconfig(kube.kubeconfig)
    bearer = f"Bearer {token.status.token}"
    nobody = kubeapi.Endpoint(
        admin.host, admin.port, ssl.create_default_context(cafile=str(kube.ca_file)),
        lambda: bearer,
    )  # fmt: skip
    with pytest.raises(kubeapi.ApiError) as refused:
        kubeapi.ConfigMaps(nobody, namespace, "metadata.name=a").list(5)
    said = str(refused.value)
    assert refused.value.status == 403, said
    assert f"system:serviceaccount:{namespace}:nobody" in said, said
    assert 'cannot list resource "configmaps"' in said, said
    assert token.status.token not in said


def test_outside_a_pod_the_missing_variables_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kubeapi.HOST_ENV, raising=False)
    with pytest.raises(
        kubeapi.ApiError, match="KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"
    ):
        kubeapi.in_cluster()
