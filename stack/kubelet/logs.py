"""The kubelet's ``containerLogs`` endpoint, so ``kubectl logs`` (and ``-f``) work.

``kubectl logs`` asks the apiserver for ``pods/log``; the apiserver dials the Node's
kubelet (the address type it prefers, here the InternalIP, and the port the Node
publishes in ``status.daemonEndpoints.kubeletEndpoint``) and proxies
``GET /containerLogs/<namespace>/<pod>/<container>``. :class:`KubeletLogServer`
serves that over HTTPS from the files ``container`` writes
(``<pods root>/<ns>_<pod>_<uid>/logs/<container>/<restart>.log``). Only clients
with a certificate of the cluster CA are answered: the apiserver presents one
(``segue.stack.kube`` gives it ``--kubelet-client-certificate``). The server's own
certificate comes from a CA of its own that nobody is told about; the apiserver,
run without ``--kubelet-certificate-authority``, does not check it (as a
kube-apiserver's default).

Query parameters, as the kubelet reads them: ``follow``, ``previous``,
``tailLines``, ``limitBytes``. ``timestamps`` and ``sinceSeconds`` are accepted but
not applied: the log files carry no per-line times.
"""

from __future__ import annotations

import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from segue.stack.certs import serving_pair

FOLLOW_TICK = 0.2  # seconds between looks at a followed file


def container_logs(pods_root: Path, namespace: str, pod: str, container: str) -> list[Path]:
    """The log files of the newest instance of ``pod`` for ``container``, oldest run
    first (``<restart count>.log``). A pod name has no ``_``, so the prefix is exact."""
    dirs = [
        d / "logs" / container
        for d in pods_root.glob(f"{namespace}_{pod}_*")
        if (d / "logs" / container).is_dir()
    ]
    if not dirs:
        return []
    newest = max(dirs, key=lambda d: d.stat().st_mtime)
    return sorted(newest.glob("*.log"), key=lambda p: int(p.stem))


def tail(data: bytes, lines: int | None, limit: int | None) -> bytes:
    if lines is not None:
        data = b"".join(data.splitlines(keepends=True)[-lines:] if lines > 0 else [])
    if limit is not None:
        data = data[:limit]
    return data


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        return  # the apiserver's requests are not worth a line each

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != "containerLogs":
            self.send_error(404, "only /containerLogs/<namespace>/<pod>/<container> is served")
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        _, namespace, pod, container = parts
        runs = container_logs(self.server.pods_root, namespace, pod, container)
        previous = query.get("previous") == "true"
        if len(runs) < (2 if previous else 1):
            which = "a previous" if previous else "a"
            self.send_error(404, f"container {container!r} of {namespace}/{pod} has no {which} log")
            return
        path = runs[-2] if previous else runs[-1]
        lines = int(query["tailLines"]) if "tailLines" in query else None
        limit = int(query["limitBytes"]) if "limitBytes" in query else None
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        with open(path, "rb") as log:
            self._write(tail(log.read(), lines, limit))
            if query.get("follow") == "true" and not previous:
                self._follow(log, path)

    def _follow(self, log: object, path: Path) -> None:
        """Stream what is appended until the run ends (a newer run's file appears or
        the pod instance is gone), the client leaves, or the server stops."""
        assert hasattr(log, "read")
        instance = path.parents[2]
        while not self.server.stopping.is_set():
            chunk = log.read()
            if chunk:
                if not self._write(chunk):
                    return
                continue
            newer = path.with_name(f"{int(path.stem) + 1}.log").exists()
            if newer or not (instance / "rootfs").exists():
                return
            time.sleep(FOLLOW_TICK)

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            return False
        return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    pods_root: Path
    stopping: threading.Event


class KubeletLogServer:
    """HTTPS on ``host``: a free port unless given; :attr:`port` once started."""

    def __init__(self, pods_root: Path, pki_dir: Path, ca_file: Path, host: str) -> None:
        self.pods_root, self.pki_dir, self.ca_file, self.host = pods_root, pki_dir, ca_file, host
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def start(self, port: int = 0) -> KubeletLogServer:
        _, serving = serving_pair(self.pki_dir, dns=("localhost",), ips=(self.host,))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(serving.cert), str(serving.key))
        context.load_verify_locations(cafile=str(self.ca_file))
        context.verify_mode = ssl.CERT_REQUIRED  # the apiserver's client certificate
        server = _Server((self.host, port), _Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.pods_root, server.stopping = self.pods_root, threading.Event()
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="kubelet-logs"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(10)
        self._server = None
