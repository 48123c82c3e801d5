"""The provider behind the local stack's real aggregation layer: values read through
the API server (``kubectl get --raw``'s path), a 404 Status for an unknown app,
authorization by the API server before anything reaches the provider, and a refusal
for anyone but the front proxy who talks to the provider directly."""

from __future__ import annotations

import math
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.operator.autoscale import AppSignal, SignalBoard
from segue.operator.metricsapi import Credentials, MetricsServer, serve
from segue.stack.paths import Binaries
from segue.stack.process import free_port

from .aggregation import metric_path, provider_certs, registered, through_apiserver

pytestmark = pytest.mark.timeout(180)
SERVICE = "segue-external-metrics"
HPA = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"


def signal(namespace: str, app: str, **changes: Any) -> AppSignal:
    fields: dict[str, Any] = {
        "namespace": namespace,
        "app": app,
        "time": time.time(),
        "replicas": 2,
        "lag_records": 3001,
        "input_rate": 100.0,
        "processing_rate": 90.0,
        "seconds_to_catch_up": math.inf,
        "projected_seconds_to_catch_up": 12.5,
    }
    return AppSignal(**{**fields, **changes})


class Provider:
    def __init__(self, server: MetricsServer, board: SignalBoard, ca: Path, port: int) -> None:
        self.server, self.board, self.ca, self.port = server, board, ca, port


@pytest.fixture
def provider(kube: Any, kube_api: Any, namespace: str, tmp_path: Path) -> Iterator[Provider]:
    """A provider on 127.0.0.1 serving a board the test fills, registered as the
    cluster's external.metrics.k8s.io."""
    ca, serving = provider_certs(tmp_path / "pki", namespace, SERVICE)
    board = SignalBoard()
    board.put(signal(namespace, "wc"))
    port = free_port()
    server = serve(
        "127.0.0.1", port, Credentials(kube_api, str(serving.cert), str(serving.key)),
        lambda: (board, "leader"),
    )  # fmt: skip
    try:
        with registered(kube_api, namespace, SERVICE, port, ca.cert):
            yield Provider(server, board, ca.cert, port)
    finally:
        server.shutdown()
        server.server_close()


def test_values_come_through_the_aggregation_layer(
    kube: Any, namespace: str, provider: Provider
) -> None:
    kubectl = [str(Binaries.locate().kubectl), "--kubeconfig", str(kube.kubeconfig)]
    raw = subprocess.run(
        [*kubectl, "get", "--raw", metric_path(namespace, "segue-lag-records", "wc")],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout  # fmt: skip
    assert '"value":"3001"' in raw.replace(" ", ""), raw
    code, body = through_apiserver(kube, metric_path(namespace, "segue-lag-records", "wc"))
    assert code == 200, body
    (item,) = body["items"]
    assert (item["metricName"], item["metricLabels"]) == (
        "segue-lag-records",
        {"segue.dev/app": "wc"},
    )
    expected = {
        "segue-seconds-to-catch-up": "1000000000",  # inf, clamped
        "segue-projected-seconds-to-catch-up": "12500m",
        "segue-lag-per-replica": "1500500m",
    }
    for metric, value in expected.items():
        code, body = through_apiserver(kube, metric_path(namespace, metric, "wc"))
        assert (code, body["items"][0]["value"]) == (200, value), body
    provider.board.put(signal(namespace, "wc", lag_records=0, seconds_to_catch_up=0.0))
    code, body = through_apiserver(kube, metric_path(namespace, "segue-seconds-to-catch-up", "wc"))
    assert body["items"][0]["value"] == "0"  # the board is read on every request
    code, body = through_apiserver(kube, "/apis/external.metrics.k8s.io/v1beta1")
    assert code == 200
    assert "segue-projected-seconds-to-catch-up" in {r["name"] for r in body["resources"]}


def test_an_unknown_app_or_metric_is_a_404_status_naming_it(
    kube: Any, namespace: str, provider: Provider
) -> None:
    code, body = through_apiserver(kube, metric_path(namespace, "segue-lag-records", "nope"))
    assert (code, body["kind"], body["reason"]) == (404, "Status", "NotFound"), body
    assert f"StreamApp {namespace}/nope" in body["message"]
    code, body = through_apiserver(kube, metric_path("elsewhere", "segue-lag-records", "wc"))
    assert code == 404, body  # the namespace is part of the key
    code, body = through_apiserver(kube, metric_path(namespace, "cpu", "wc"))
    assert code == 404
    assert "'cpu'" in body["message"]
    code, body = through_apiserver(
        kube, f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{namespace}/segue-lag-records"
    )
    assert (code, body["reason"]) == (400, "BadRequest")
    assert "segue.dev/app=" in body["message"]


def test_the_apiserver_authorizes_before_it_proxies(
    kube: Any, namespace: str, provider: Provider
) -> None:
    path = metric_path(namespace, "segue-lag-records", "wc")
    code, body = through_apiserver(kube, path, user=HPA)  # its bootstrap role allows it
    assert code == 200, body
    code, body = through_apiserver(kube, path, user="someone")
    assert (code, body.get("reason")) == (403, "Forbidden"), body


def test_only_the_front_proxy_is_answered(kube: Any, provider: Provider) -> None:
    url = f"https://127.0.0.1:{provider.port}/apis/external.metrics.k8s.io/v1beta1"

    def get(cert: Any = None, user: str | None = None) -> int:
        context = ssl.create_default_context(cafile=str(provider.ca))
        context.check_hostname = False  # the address, not the Service's name
        if cert is not None:
            context.load_cert_chain(str(cert.cert), str(cert.key))
        request = urllib.request.Request(url, headers={"X-Remote-User": user} if user else {})
        try:
            with urllib.request.urlopen(request, timeout=10, context=context) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    for cert in (None, kube.pki.admin):  # no certificate; the cluster CA's admin
        with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError, socket.error)):
            get(cert, "system:admin")
    assert get(kube.pki.front_proxy_client) == 401  # the proxy's certificate, no user
    assert get(kube.pki.front_proxy_client, "system:kube-aggregator") == 200


def test_a_standby_answers_from_the_status_the_leader_wrote(
    kube: Any, kube_api: Any, namespace: str, tmp_path: Path, streamapp_crd: Any
) -> None:
    """Whichever replica the aggregator's connection reached, the HPA gets a value: a
    standby reads the signal the leader wrote to the StreamApp's status."""
    from kubernetes import client

    from segue.operator.act.signal_status import to_status
    from segue.operator.api import GROUP, PLURAL, VERSION
    from segue.operator.metricsapi.status_board import StatusBoard

    custom = client.CustomObjectsApi(kube_api)
    for name in ("wc", "quiet"):
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "StreamApp", "metadata": {"name": name},
            "spec": {"replicas": 2, "applicationId": name,
                     "kafka": {"bootstrapServers": "k:9092"}, "template": {"image": "i"}},
        })  # fmt: skip
    written = signal(namespace, "wc", replicas_needed=2.5, seconds_to_catch_up=math.inf)
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, "wc",
        {"status": {"autoscaling": to_status(written).model_dump(mode="json", by_alias=True,
                                                                  exclude_none=True)}},
    )  # fmt: skip
    ca, serving = provider_certs(tmp_path / "pki", namespace, SERVICE)
    port = free_port()
    server = serve(
        "127.0.0.1", port, Credentials(kube_api, str(serving.cert), str(serving.key)),
        lambda: (StatusBoard(kube_api), "standby (leader: op-0)"),
    )  # fmt: skip
    try:
        with registered(kube_api, namespace, SERVICE, port, ca.cert):
            needed = through_apiserver(kube, metric_path(namespace, "segue-replicas-needed", "wc"))
            never = through_apiserver(
                kube, metric_path(namespace, "segue-seconds-to-catch-up", "wc")
            )
            quiet = through_apiserver(kube, metric_path(namespace, "segue-lag-records", "quiet"))
            # the leader cannot read Kafka: it says so in Degraded, and so does a standby
            custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, PLURAL, "wc",
                {"status": {"conditions": [{
                    "type": "Degraded", "status": "True", "reason": "KafkaUnavailable",
                    "message": "no broker answered", "lastTransitionTime": "2026-01-01T00:00:00Z",
                }]}},
            )  # fmt: skip
            unknown = through_apiserver(kube, metric_path(namespace, "segue-replicas-needed", "wc"))
    finally:
        server.shutdown()
        server.server_close()
    assert needed[0] == 200, needed
    assert needed[1]["items"][0]["value"] == "2500m"
    assert never[1]["items"][0]["value"] == "1000000000"  # inf survives the status as absent
    assert quiet[0] == 404, quiet  # no signal written yet: said, not made up
    assert unknown[0] == 503, unknown  # never the last value while Kafka cannot be read
    assert "unknown: Kafka unavailable: no broker answered" in str(unknown[1]), unknown
