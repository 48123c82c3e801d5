"""The worker's two requests to the API server (a list and a watch of one ConfigMap),
over the standard library's HTTPS client.

Why not the ``kubernetes`` package, which the operator uses: importing it and its
``CoreV1Api`` costs a worker about 0.8 s of CPU on a quiet core, three times that on a
busy node, and every pod of a scale pays it before it can report
(docs/benchmarks.md, "Worker start"). The worker needs one path, bearer tokens or a
client certificate, and newline-delimited watch events, as Kopf needs no more than
aiohttp. A kubeconfig (``--kubeconfig``, outside a pod) is still read by that
package's own loader, so every form of credential it knows works; only the
in-cluster path, every pod's, stays light.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue.podenv import CA_FILE, TOKEN_FILE, pod_path

HOST_ENV, PORT_ENV = "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"


class ApiError(Exception):
    """A request the API server refused or did not answer; ``status`` is its HTTP code
    (or a watch's ERROR event's), 0 when no answer came."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}" if status else message)
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where the API server is and how to log in: ``authorization`` gives the current
    header (a bearer token re-read, as the kubelet rotates the file), or None where the
    context holds a client certificate."""

    host: str
    port: int
    context: ssl.SSLContext
    authorization: Callable[[], str | None]


def in_cluster() -> Endpoint:
    """The pod's ServiceAccount, at its standard paths (through ``pod_path``)."""
    host, port = os.environ.get(HOST_ENV), os.environ.get(PORT_ENV)
    if not host or not port:
        raise ApiError(0, f"not in a pod: {HOST_ENV} and {PORT_ENV} are not both set")
    context = ssl.create_default_context(cafile=pod_path(CA_FILE))
    token_file = Path(pod_path(TOKEN_FILE))
    return Endpoint(host, int(port), context, lambda: f"Bearer {token_file.read_text().strip()}")


def from_kubeconfig(path: Path) -> Endpoint:
    """A kubeconfig's current context, read by the ``kubernetes`` package's loader."""
    from kubernetes import client, config

    configuration: Any = client.Configuration()
    load: Any = config.load_kube_config  # untyped in the package
    try:
        load(config_file=str(path), client_configuration=configuration)
    except (config.ConfigException, OSError) as exc:
        raise ApiError(0, f"kubeconfig {path}: {exc}") from exc
    url = urllib.parse.urlsplit(configuration.host)
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if not configuration.verify_ssl:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)

    def authorization() -> str | None:  # as the package's ApiClient sends it
        bearer = configuration.auth_settings().get("BearerToken")
        return str(bearer["value"]) if bearer else None

    return Endpoint(url.hostname or "", url.port or 443, context, authorization)


class ConfigMaps:
    """List and watch the ConfigMaps of ``namespace`` that ``field_selector`` picks."""

    def __init__(self, endpoint: Endpoint, namespace: str, field_selector: str) -> None:
        self.endpoint = endpoint
        self.path = f"/api/v1/namespaces/{urllib.parse.quote(namespace)}/configmaps"
        self.selector = field_selector

    def list(self, timeout: float) -> tuple[list[dict[str, Any]], str | None]:
        """The items and the list's resourceVersion (where a watch starts)."""
        with self._open({}, timeout) as response:
            body = json.loads(response.read())
        return body.get("items") or [], (body.get("metadata") or {}).get("resourceVersion")

    def watch(self, version: str | None, seconds: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """Events after ``version`` as (type, object) until the server ends the watch
        (after ``seconds``); an ERROR event (410 Gone: list again) raises ApiError."""
        query = {"watch": "true", "timeoutSeconds": str(seconds)}
        if version:
            query["resourceVersion"] = version
        with self._open(query, seconds + 15) as response:
            for line in response:
                if line.strip():
                    yield event(line)

    def _open(self, query: dict[str, str], timeout: float) -> _Request:
        query = {"fieldSelector": self.selector, **query}
        return _Request(self.endpoint, self.path, query, timeout)


def event(line: bytes) -> tuple[str, dict[str, Any]]:
    """One line of a watch: (type, object); an ERROR event's Status raises ApiError with
    its code (410 Gone: the version is too old to watch from, list again)."""
    said = json.loads(line)
    kind, obj = said.get("type", ""), said.get("object") or {}
    if kind == "ERROR":
        raise ApiError(int(obj.get("code") or 500), str(obj.get("message", obj)))
    return kind, obj


class _Request:
    """One GET on a connection of its own (callers are on different threads)."""

    def __init__(self, endpoint: Endpoint, path: str, query: dict[str, str], timeout: float):
        self.endpoint, self.timeout = endpoint, timeout
        self.target = f"{path}?{urllib.parse.urlencode(query)}"
        self.connection: http.client.HTTPSConnection | None = None

    def __enter__(self) -> http.client.HTTPResponse:
        end = self.endpoint
        self.connection = http.client.HTTPSConnection(
            end.host, end.port, context=end.context, timeout=self.timeout
        )
        headers = {"Accept": "application/json"}
        authorization = end.authorization()
        if authorization:
            headers["Authorization"] = authorization
        try:
            self.connection.request("GET", self.target, headers=headers)
            response = self.connection.getresponse()
        except OSError as exc:
            self.connection.close()
            raise ApiError(0, f"{type(exc).__name__}: {exc}") from exc
        if response.status != 200:
            said = response.read(2000).decode(errors="replace")
            self.connection.close()
            raise ApiError(response.status, _message(said))
        return response

    def __exit__(self, *exc: object) -> None:
        if self.connection is not None:
            self.connection.close()


def _message(body: str) -> str:
    """A Status object's message, or the body as it came."""
    try:
        return str(json.loads(body).get("message") or body)
    except (ValueError, AttributeError):
        return body
