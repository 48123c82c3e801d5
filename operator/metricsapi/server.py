"""The ``external.metrics.k8s.io/v1beta1`` API over HTTPS, for the aggregation layer.

Stdlib only (``http.server`` and ``ssl``): a handful of GET paths do not need a
framework. Each connection's TLS handshake runs in that connection's thread, so a
slow or hostile client cannot hold up the accept loop. Every replica serves: the
aggregation layer's availability check reads discovery, which any replica answers,
so the APIService stays ``Available`` through a failover; a metric value comes only
from the replica whose reconcile loops fill the board, and a standby answers ``503``
saying who leads (the HPA then keeps the current count for that sync).
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from segue.operator.autoscale import SignalBoard
from segue.operator.metricsapi import values
from segue.operator.metricsapi.trust import Credentials
from segue.operator.metricsapi.values import GROUP, GROUP_VERSION, Refusal

log = logging.getLogger("segue.operator.metricsapi")

# The board to answer from, or why there is none (a standby: "standby (leader: x)").
BoardSource = Callable[[], tuple[SignalBoard | None, str]]
STALE_AFTER = 60.0  # seconds: an older signal means the app's loop is not running
HANDSHAKE_TIMEOUT = 10.0
PREFIX = f"/apis/{GROUP_VERSION}/namespaces/"
FIXED: dict[str, Callable[[], dict[str, Any]]] = {
    "/apis": values.api_group_list,
    f"/apis/{GROUP}": values.api_group,
    f"/apis/{GROUP_VERSION}": values.resource_list,
    "/openapi/v2": values.openapi_v2,
    "/openapi/v3": values.openapi_v3,
}


def answer(path: str, board: BoardSource, now: float, stale_after: float) -> dict[str, Any]:
    """The JSON body for a GET of ``path`` (with its query); raises :class:`Refusal`."""
    parts = urlsplit(path)
    if parts.path.rstrip("/") in FIXED:
        return FIXED[parts.path.rstrip("/")]()
    rest = parts.path[len(PREFIX) :].strip("/").split("/") if parts.path.startswith(PREFIX) else []
    if len(rest) != 2 or not all(rest):
        raise Refusal(404, "NotFound", f"{parts.path} is not served here")
    namespace, metric = rest
    if metric not in values.METRICS:
        served = ", ".join(sorted(values.METRICS))
        raise Refusal(404, "NotFound", f"external metric {metric!r} is not served; try {served}")
    app = values.app_of(parse_qs(parts.query).get("labelSelector", [None])[0])
    signals, why = board()
    if signals is None:
        raise Refusal(503, "ServiceUnavailable", f"no external metrics here: {why}")
    signal = signals.get(namespace, app)
    if signal is None:
        raise Refusal(
            404,
            "NotFound",
            f"no signal for StreamApp {namespace}/{app} (none such, or not seen yet)",
        )
    if signal.unknown:
        why = f"the signal of {namespace}/{app} is unknown: {signal.unknown}"
        raise Refusal(503, "ServiceUnavailable", why)
    if now - signal.time > stale_after:
        raise Refusal(
            503,
            "ServiceUnavailable",
            f"the signal of {namespace}/{app} is {now - signal.time:.0f}s old",
        )
    return values.value_list(metric, signal)


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"  # the proxy keeps connections open
    timeout = 300  # seconds an idle kept-alive connection stays open

    def do_GET(self) -> None:
        peer = self.connection.getpeercert()
        _, proxy = self.server.credentials.current()
        if not proxy.allows(peer) or proxy.user(self.headers) is None:
            self._send(401, values.status(Refusal(401, "Unauthorized", "not the front proxy")))
            return
        if self.path.split("?", 1)[0] in ("/healthz", "/livez", "/readyz"):
            self._send(200, b"ok", "text/plain")
            return
        try:
            body = answer(self.path, self.server.board, time.time(), self.server.stale_after)
        except Refusal as refused:
            log.debug("external metrics: %s -> %d %s", self.path, refused.code, refused.message)
            body = values.status(refused, {"name": urlsplit(self.path).path.rsplit("/", 1)[-1]})
            self._send(refused.code, body)
            return
        self._send(200, body)

    def _send(
        self, code: int, body: dict[str, Any] | bytes, kind: str = "application/json"
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        user = self.headers.get("X-Remote-User", "-") if hasattr(self, "headers") else "-"
        log.debug("external metrics (%s): " + format, user, *args)


class MetricsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        credentials: Credentials,
        board: BoardSource,
        stale_after: float = STALE_AFTER,
    ) -> None:
        self.credentials, self.board, self.stale_after = credentials, board, stale_after
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """TLS here, in the connection's own thread, then the handler."""
        context, _ = self.credentials.current()
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            tls = context.wrap_socket(request, server_side=True)
        except OSError as exc:  # ssl.SSLError included: no or a wrong client certificate
            log.info("external metrics: refused a connection from %s: %s", client_address[0], exc)
            return
        try:
            _Handler(tls, client_address, self)
        finally:
            tls.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("external metrics: connection from %s ended badly", client_address, exc_info=True)


def serve(host: str, port: int, credentials: Credentials, board: BoardSource) -> MetricsServer:
    """Start serving in a daemon thread; returns the server (``shutdown()`` stops it)."""
    server = MetricsServer((host, port), credentials, board)
    threading.Thread(target=server.serve_forever, name="external-metrics", daemon=True).start()
    log.info("external metrics API on https://%s:%d", host, server.server_address[1])
    return server
