"""Who may talk to the external metrics API: only the API server's front proxy.

The aggregation layer proxies each request with a client certificate signed by the
*requestheader* CA and says who the user is in ``X-Remote-User`` (after it has
authenticated and authorized the request itself). kube-system's
``extension-apiserver-authentication`` ConfigMap publishes that CA, the certificate
names allowed to act as the proxy and the header names; this module reads it (RBAC:
``get`` on that one ConfigMap, the built-in ``extension-apiserver-authentication-reader``
Role) and builds the TLS context that demands such a certificate, so a direct
request without one fails the handshake and no header is ever believed from anyone
else. Authorization is the API server's: it checks ``list`` on
``external.metrics.k8s.io/<metric>`` before it proxies (what the HPA controller's
bootstrap role grants), so there is no SubjectAccessReview here (docs/operator.md).
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("segue.operator.metricsapi")

CONFIGMAP = "extension-apiserver-authentication"
CONFIGMAP_NAMESPACE = "kube-system"
RELOAD_SECONDS = 60.0  # the CA, the allowed names and the serving certificate are re-read


@dataclass(frozen=True)
class FrontProxy:
    """The requestheader settings of the API server, as published in the ConfigMap."""

    client_ca: str  # PEM
    allowed_names: tuple[str, ...]  # empty: any certificate the CA signed
    username_headers: tuple[str, ...]
    group_headers: tuple[str, ...]

    @staticmethod
    def from_configmap(data: dict[str, str]) -> FrontProxy:
        ca = data.get("requestheader-client-ca-file", "")
        if "BEGIN CERTIFICATE" not in ca:
            raise ValueError(
                f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP} has no requestheader-client-ca-file: "
                "the API server's aggregation layer is not configured"
            )

        def names(key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
            raw = data.get(key)
            return tuple(json.loads(raw)) if raw else default

        return FrontProxy(
            client_ca=ca,
            allowed_names=names("requestheader-allowed-names"),
            username_headers=names("requestheader-username-headers", ("X-Remote-User",)),
            group_headers=names("requestheader-group-headers", ("X-Remote-Group",)),
        )

    def allows(self, peer: dict[str, Any] | None) -> bool:
        """The verified client certificate is one of the allowed names (by common name)."""
        if not peer:
            return False
        if not self.allowed_names:
            return True
        common_names = {
            value for rdn in peer.get("subject", ()) for key, value in rdn if key == "commonName"
        }
        return bool(common_names & set(self.allowed_names))

    def user(self, headers: Any) -> str | None:
        return next((headers[h] for h in self.username_headers if headers.get(h)), None)


def read_front_proxy(api_client: Any) -> FrontProxy:
    from kubernetes.client import CoreV1Api

    cm = CoreV1Api(api_client).read_namespaced_config_map(CONFIGMAP, CONFIGMAP_NAMESPACE)
    return FrontProxy.from_configmap(cm.data or {})


def server_context(cert_file: str, key_file: str, proxy: FrontProxy) -> ssl.SSLContext:
    """TLS 1.2+, this server's certificate, and a client certificate from the proxy's CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=proxy.client_ca)
    return context


class Credentials:
    """The current TLS context and front-proxy settings, re-read every
    :data:`RELOAD_SECONDS` (a rotated serving certificate or CA is picked up without a
    restart); a failed re-read keeps the last good ones and says why."""

    def __init__(self, api_client: Any, cert_file: str, key_file: str) -> None:
        self._api_client, self._cert, self._key = api_client, cert_file, key_file
        self._lock = threading.Lock()
        self.proxy = read_front_proxy(api_client)
        self.context = server_context(cert_file, key_file, self.proxy)
        self._read_at = time.monotonic()

    def current(self) -> tuple[ssl.SSLContext, FrontProxy]:
        with self._lock:
            if time.monotonic() - self._read_at >= RELOAD_SECONDS:
                self._read_at = time.monotonic()
                try:
                    proxy = read_front_proxy(self._api_client)
                    self.context = server_context(self._cert, self._key, proxy)
                    self.proxy = proxy
                except Exception as exc:  # keep serving with what worked
                    log.warning("external metrics: keeping the previous TLS settings: %s", exc)
            return self.context, self.proxy
