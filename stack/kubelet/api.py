"""A thin JSON client for the apiserver, shared by every part of the pod runner.

The pod runner speaks to the apiserver in plain JSON dicts (the shape of the
REST API) rather than the generated models: the generated client has known
deserialisation bugs on some subresources (``pods/binding``), and dicts are what
the pure modules (``podspec``, ``status``) compute on. Requests go through the
kubernetes client's :class:`ApiClient`, so authentication, TLS and the
connection pool come from the kubeconfig exactly as for any other client.

:meth:`Api.watch` streams a watch and can be aborted from another thread
(:meth:`Api.abort`), which is how ``watch.Watcher`` stops promptly.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

Obj = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"


class Api:
    """JSON requests against one apiserver with one identity (a kubeconfig)."""

    def __init__(self, kubeconfig: Path, pool_size: int = 32) -> None:
        configuration = client.Configuration()
        load: Any = config.load_kube_config  # untyped in the client
        load(
            config_file=str(kubeconfig),
            client_configuration=configuration,
            persist_config=False,
        )
        configuration.connection_pool_maxsize = pool_size
        self._client = client.ApiClient(configuration)
        self._client.user_agent = "segue-pod-runner"
        self._streams: dict[Any, str] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.abort()
        closing: Any = self._client
        closing.close()

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None,
        body: Any,
        content_type: str | None,
        timeout: float | tuple[float, float],
    ) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        params = [
            (k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in (query or {}).items()
        ]
        request = self._client.param_serialize(
            method=method,
            resource_path=path,
            query_params=params,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        response: Any = self._client.call_api(*request, _request_timeout=timeout)
        if not 200 <= response.status <= 299:
            response.read()
            raise ApiException(http_resp=response)
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: float = 30.0,
    ) -> Obj:
        """One request; the decoded JSON answer. Non-2xx raises ApiException."""
        response = self._call(
            method, path, query=query, body=body, content_type=content_type, timeout=timeout
        )
        data = response.read()  # Any: untyped in the client
        decoded: Obj = json.loads(data) if data else {}
        return decoded

    def get_or_none(self, path: str) -> Obj | None:
        try:
            return self.request("GET", path)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def watch(self, path: str, query: Mapping[str, Any], tag: str = "") -> Iterator[Obj]:
        """Stream the watch events of ``path`` (``watch=true`` is added);
        :meth:`abort` with the same ``tag`` ends it from another thread."""
        timeout = float(query.get("timeoutSeconds", 300))
        response = self._call(
            "GET",
            path,
            query={**query, "watch": True},
            body=None,
            content_type=None,
            timeout=(10.0, timeout + 30.0),
        )
        raw = response.response
        with self._lock:
            self._streams[raw] = tag
        try:
            buffer = b""
            for chunk in raw.stream(amt=None, decode_content=False):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        event: Obj = json.loads(line)
                        yield event
        finally:
            with self._lock:
                self._streams.pop(raw, None)
            # Closed, not released: a watch left early has unread data on the wire.
            with contextlib.suppress(Exception):
                raw.close()

    def abort(self, tag: str | None = None) -> None:
        """Unblock the watch streams in progress (all, or those of ``tag``)."""
        with self._lock:
            streams = [raw for raw, t in self._streams.items() if tag is None or t == tag]
        for raw in streams:
            # Shut the socket down rather than close(): close() would wait for
            # the SSL lock held by the thread blocked in read.
            sock = getattr(getattr(raw, "connection", None), "sock", None)
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    # Typed helpers for the objects the pod runner reads.

    def config_map_data(self, namespace: str, name: str) -> dict[str, bytes] | None:
        """A ConfigMap's data and binaryData as bytes, or None if it does not exist."""
        cm = self.get_or_none(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        if cm is None:
            return None
        data = {k: v.encode() for k, v in (cm.get("data") or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in (cm.get("binaryData") or {}).items()})
        return data

    def secret_data(self, namespace: str, name: str) -> dict[str, bytes] | None:
        """A Secret's data (decoded) and stringData, or None if it does not exist."""
        secret = self.get_or_none(f"/api/v1/namespaces/{namespace}/secrets/{name}")
        if secret is None:
            return None
        data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
        data.update({k: v.encode() for k, v in (secret.get("stringData") or {}).items()})
        return data


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an ApiException, None for anything else."""
    status = getattr(exc, "status", None) if isinstance(exc, ApiException) else None
    return int(status) if status is not None else None
