"""Registering an external metrics provider that runs on this machine with the local
stack's aggregation layer, and reading through it.

The provider listens on 127.0.0.1. The API server (started without
``--enable-aggregator-routing``) dials what the APIService's Service resolves to; for an
``ExternalName`` Service that is the name itself, here ``127.0.0.1``, so the request
never leaves loopback, and no address, route or namespace has to be configured.
Everything else is what a cluster has: the APIService with its ``caBundle``, TLS to
the Service's DNS name ``<name>.<namespace>.svc``, the front proxy's client
certificate. ``registered`` removes both objects afterwards: a dangling APIService
would break discovery (and so namespace deletion) for every later test.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubernetes import client

from segue.stack.certs import KeyPair, serving_pair

APISERVICE = "v1beta1.external.metrics.k8s.io"
LOOPBACK = "127.0.0.1"


def provider_certs(workdir: Path, namespace: str, service: str) -> tuple[KeyPair, KeyPair]:
    """(CA, serving pair) for a provider behind Service ``namespace/service``."""
    names = (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local")
    return serving_pair(workdir, names, (LOOPBACK,))


def available(api: Any) -> tuple[bool, str]:
    obj = client.ApiregistrationV1Api(api).read_api_service(APISERVICE)
    for condition in (obj.status and obj.status.conditions) or []:
        if condition.type == "Available":
            return condition.status == "True", f"{condition.reason}: {condition.message}"
    return False, "no Available condition yet"


@contextlib.contextmanager
def registered(
    api: Any, namespace: str, service: str, port: int, ca: Path, *, timeout: float = 60
) -> Iterator[None]:
    """The APIService for ``external.metrics.k8s.io`` pointing at a provider on
    ``127.0.0.1:port``, through an ExternalName Service; waits until it is Available."""
    core, registration = client.CoreV1Api(api), client.ApiregistrationV1Api(api)
    core.create_namespaced_service(
        namespace,
        {
            "metadata": {"name": service},
            "spec": {
                "type": "ExternalName",
                "externalName": LOOPBACK,
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
        },
    )
    registration.create_api_service(
        {
            "metadata": {"name": APISERVICE},
            "spec": {
                "group": "external.metrics.k8s.io",
                "version": "v1beta1",
                "service": {"namespace": namespace, "name": service, "port": port},
                "caBundle": base64.b64encode(ca.read_bytes()).decode(),
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        }
    )
    try:
        deadline = time.monotonic() + timeout
        while not (state := available(api))[0]:
            assert time.monotonic() < deadline, f"APIService not Available: {state[1]}"
            time.sleep(0.25)
        yield
    finally:
        registration.delete_api_service(APISERVICE)
        core.delete_namespaced_service(service, namespace)


def through_apiserver(kube: Any, path: str, user: str | None = None) -> tuple[int, Any]:
    """GET ``path`` from the API server as the admin (or impersonating ``user``):
    (HTTP status, decoded JSON body)."""
    assert kube.pki is not None
    context = ssl.create_default_context(cafile=str(kube.ca_file))
    context.load_cert_chain(str(kube.pki.admin.cert), str(kube.pki.admin.key))
    request = urllib.request.Request(f"{kube.server}{path}")
    if user:
        request.add_header("Impersonate-User", user)
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as reply:
            return reply.status, _decoded(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _decoded(exc.read() or b"{}")


def _decoded(body: bytes) -> Any:
    """JSON, or the text as it came (a proxy error page is not a Status)."""
    try:
        return json.loads(body)
    except ValueError:
        return body.decode(errors="replace")


def metric_path(namespace: str, metric: str, app: str) -> str:
    return (
        f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{namespace}/{metric}"
        f"?labelSelector=segue.dev%2Fapp%3D{app}"
    )
