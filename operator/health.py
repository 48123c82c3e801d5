"""The operator's probes: ``/healthz`` (liveness) and ``/readyz`` (readiness).

Kopf's own liveness endpoint only exists once Kopf runs, and a standby replica (see
:mod:`.election`) does not run Kopf at all: it waits for the lease. So the process
serves its own probes from the start, each answering from one callable that says how
the replica is doing right now (``standby``, ``leader``, or why it is not well), with
the reason in the body for whoever curls it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from segue.protocol.names import HEALTH_PATH, READY_PATH

log = logging.getLogger("segue.operator.health")

# (healthy, what to say): the replica's state as the probes report it
Probe = Callable[[], tuple[bool, str]]


def serve(host: str, port: int, live: Probe, ready: Probe) -> ThreadingHTTPServer:
    """Start serving in a daemon thread; returns the server (``shutdown()`` stops it)."""
    probes = {HEALTH_PATH: live, READY_PATH: ready}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            probe = probes.get(self.path.split("?", 1)[0])
            if probe is None:
                self._answer(404, "not found\n")
                return
            ok, message = probe()
            self._answer(200 if ok else 503, message + "\n")

        def _answer(self, code: int, text: str) -> None:
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug(format, *args)  # probes every few seconds: not worth an info line

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="health", daemon=True).start()
    return server
