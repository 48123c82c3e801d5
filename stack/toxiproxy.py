"""Toxiproxy, a real TCP proxy in the path between a client and a server, driven over
its HTTP API: how the fault suite slows down and cuts one worker's connections to Kafka
(tests/faults/test_network.py, docs/local-stack.md "A proxy in the path").

Pods under the pod runner share the machine's network (no namespaces, no firewall of
their own), so a network fault cannot be put on a pod's interface; it is put on the
route instead: the pod reaches the broker only through the proxy, and the proxy's
*toxics* act on every byte of it. ``toxiproxy-server`` is built from the Go module
proxy by ``stack/install/toxiproxy.sh`` at the version pinned in ``versions.env``;
this module only starts it and speaks its API (urllib, no client library).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from segue.stack.paths import cache_dir, read_versions
from segue.stack.process import ManagedProcess, StackError, free_port


def toxiproxy_server() -> Path:
    """The pinned ``toxiproxy-server``; StackError naming ``make stack`` when absent."""
    path = cache_dir() / f"toxiproxy-{read_versions()['TOXIPROXY_VERSION']}" / "bin"
    binary = path / "toxiproxy-server"
    if not binary.exists():
        raise StackError(f"toxiproxy is not installed (missing: {binary}); run `make stack`")
    return binary


class Toxiproxy:
    """One ``toxiproxy-server`` on 127.0.0.1 (its API on a free port) and its proxies."""

    def __init__(self, workdir: Path, host: str = "127.0.0.1") -> None:
        self.host = host
        self.api_port = free_port(host)
        self.process = ManagedProcess(
            "toxiproxy",
            [str(toxiproxy_server()), "-host", host, "-port", str(self.api_port)],
            workdir / "toxiproxy.log",
        )

    def start(self, timeout: float = 30.0) -> None:
        self.process.start()
        self.process.wait_ready(lambda: bool(self._call("GET", "/version")), timeout, "its API")

    def stop(self) -> None:
        self.process.stop(grace=5)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            f"http://{self.host}:{self.api_port}{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise StackError(f"toxiproxy {method} {path}: {exc.code} {exc.read()!r}") from exc
        text = raw.decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def proxy(self, name: str, listen_port: int, upstream: str) -> Proxy:
        """A proxy listening on ``host:listen_port``, relaying to ``upstream`` (host:port)."""
        self._call(
            "POST",
            "/proxies",
            {"name": name, "listen": f"{self.host}:{listen_port}", "upstream": upstream,
             "enabled": True},
        )  # fmt: skip
        return Proxy(self, name, listen_port)


class Proxy:
    """One proxy of a :class:`Toxiproxy`: its toxics, on and off."""

    def __init__(self, server: Toxiproxy, name: str, listen_port: int) -> None:
        self.server = server
        self.name = name
        self.listen_port = listen_port

    def add(self, toxic: str, kind: str, stream: str = "downstream", **attributes: int) -> None:
        """A toxic (``latency``: ``latency``/``jitter`` ms; ``timeout``: ``timeout`` ms,
        0 = drop every byte and never close) on ``stream`` (``downstream``: server to
        client; ``upstream``: client to server), on every connection, old and new."""
        body = {"name": toxic, "type": kind, "stream": stream, "attributes": attributes}
        self.server._call("POST", f"/proxies/{self.name}/toxics", body)

    def remove(self, toxic: str) -> None:
        self.server._call("DELETE", f"/proxies/{self.name}/toxics/{toxic}")

    def toxics(self) -> list[str]:
        return [t["name"] for t in self.server._call("GET", f"/proxies/{self.name}/toxics")]

    def enabled(self, on: bool) -> None:
        """Off: every connection through it is closed and new ones are refused."""
        self.server._call("POST", f"/proxies/{self.name}", {"enabled": on})

    def reset(self) -> None:
        """Close every connection through it (they reconnect through it at once)."""
        self.enabled(False)
        self.enabled(True)

    def clear(self) -> None:
        """No toxics, enabled: the plain relay again."""
        for toxic in self.toxics():
            self.remove(toxic)
        self.enabled(True)
