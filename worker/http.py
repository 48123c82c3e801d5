"""The worker's one HTTP port: ``/metrics``, ``/healthz``, ``/readyz``, ``/topology``.

``/healthz`` answers 200 while the main loop keeps beating (it beats at least
every few seconds even when idle) and no Kafka call is stuck past its bound
(``watchdog``), so a wedged loop fails liveness; the 503's body names the stuck
call and for how long. ``/readyz`` answers 200 once a first assignment is applied
and every active task is restored and running (``metrics.Snapshot.ready``), and
no call is stuck: a worker stuck in a call processes nothing. ``/topology`` serves the
JSON ``describe`` made of the application (fixed for the process; 404 if none
was given). Served from a daemon thread with the standard library; the registry
is ``metrics``'.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from segue.protocol.names import HEALTH_PATH, METRICS_PATH, READY_PATH, TOPOLOGY_PATH
from segue.worker.metrics import WorkerMetrics

STALE_AFTER = 60.0  # seconds without a main-loop beat before /healthz fails


def serve(
    metrics: WorkerMetrics, host: str, port: int, topology_json: bytes | None = None
) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == METRICS_PATH:
                self._reply(200, generate_latest(metrics.registry), CONTENT_TYPE_LATEST)
            elif path == HEALTH_PATH:
                stuck = metrics.stuck()
                if stuck is not None:
                    self._reply(503, f"{stuck}\n".encode())
                elif time.monotonic() - metrics.heartbeat < STALE_AFTER:
                    self._reply(200, b"ok\n")
                else:
                    self._reply(503, b"main loop stalled\n")
            elif path == READY_PATH:
                stuck = metrics.stuck()
                if stuck is not None:
                    self._reply(503, f"not ready: {stuck}\n".encode())
                elif metrics.snapshot.ready:
                    self._reply(200, b"ready\n")
                else:
                    self._reply(503, b"not ready\n")
            elif path == TOPOLOGY_PATH and topology_json is not None:
                self._reply(200, topology_json, "application/json")
            else:
                self._reply(404, b"not found\n")

        def _reply(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="segue-http", daemon=True).start()
    return server
