"""Probes and lifecycle handlers: httpGet, tcpSocket and exec, as the kubelet runs them.

:func:`run_action` performs one action (a probe's or a preStop hook's);
:class:`ProbeWorker` is one probe of one running container on its own thread,
applying initialDelaySeconds, periodSeconds, timeoutSeconds and the
success/failure thresholds. ``container.Container`` owns the workers of its
current process and reads their results to decide ``ready`` and ``started``;
``supervisor`` restarts a container whose liveness or startup probe failed.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeTarget:
    """Where a container's probes and hooks reach it."""

    pod_ip: str
    ports: Mapping[str, int]  # the container's named ports
    env: Mapping[str, str]
    cwd: Path


def _port(value: Any, target: ProbeTarget) -> int:
    if isinstance(value, int):
        return value
    if str(value).isdigit():
        return int(value)
    if value in target.ports:
        return target.ports[value]
    raise ValueError(f"unknown named port {value!r}")


def _http(action: Obj, target: ProbeTarget, timeout: float) -> tuple[bool, str]:
    host = action.get("host") or target.pod_ip
    port = _port(action.get("port"), target)
    path = action.get("path") or "/"
    conn: http.client.HTTPConnection
    if (action.get("scheme") or "HTTP").upper() == "HTTPS":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    headers = {"User-Agent": "kube-probe/1.34", "Accept": "*/*"}
    headers.update({h["name"]: h["value"] for h in action.get("httpHeaders") or []})
    try:
        conn.request("GET", path if path.startswith("/") else "/" + path, headers=headers)
        response = conn.getresponse()
        body = response.read(1024).decode(errors="replace")
    except (OSError, http.client.HTTPException) as exc:
        return False, f'Get "http://{host}:{port}{path}": {exc}'
    finally:
        conn.close()
    if 200 <= response.status < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {response.status} {body}".strip()


def _tcp(action: Obj, target: ProbeTarget, timeout: float) -> tuple[bool, str]:
    host = action.get("host") or target.pod_ip
    port = _port(action.get("port"), target)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, ""
    except OSError as exc:
        return False, f"dial tcp {host}:{port}: {exc}"


def _exec(action: Obj, target: ProbeTarget, timeout: float) -> tuple[bool, str]:
    argv = list(action.get("command") or [])
    if not argv:
        return False, "exec action has no command"
    try:
        done = subprocess.run(
            argv,
            env=dict(target.env),
            cwd=target.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"command {argv!r} timed out after {timeout:g}s"
    except OSError as exc:
        return False, f"command {argv!r} could not run: {exc}"
    output = (done.stdout + done.stderr).decode(errors="replace").strip()
    if done.returncode == 0:
        return True, output
    return False, f"command {argv!r} exited with {done.returncode}: {output}".strip()


def run_action(action: Obj, target: ProbeTarget, timeout: float) -> tuple[bool, str]:
    """Run one probe or lifecycle handler; (success, message)."""
    try:
        if action.get("exec"):
            return _exec(action["exec"], target, timeout)
        if action.get("httpGet"):
            return _http(action["httpGet"], target, timeout)
        if action.get("tcpSocket"):
            return _tcp(action["tcpSocket"], target, timeout)
        if action.get("sleep"):
            time.sleep(min(float(action["sleep"].get("seconds", 0)), timeout))
            return True, ""
        if action.get("grpc"):
            return False, "grpc probes are not supported by the segue pod runner"
    except ValueError as exc:
        return False, str(exc)
    return False, "the probe has no action"


class ProbeWorker:
    """One readiness, liveness or startup probe of one container process.

    ``result`` is None until the thresholds first decide, then True/False, as
    the kubelet's results manager: readiness starts unready, liveness healthy.
    """

    def __init__(
        self,
        kind: str,
        probe: Obj,
        target: ProbeTarget,
        *,
        started_at: float,
        on_failure: Callable[[str, str], None],
        gate: Callable[[], bool] = lambda: True,
    ) -> None:
        self.kind = kind
        self.probe = probe
        self.target = target
        self.started_at = started_at
        self.on_failure = on_failure
        self.gate = gate  # readiness and liveness wait for the startup probe
        self.result: bool | None = True if kind == "liveness" else None
        self._last: bool | None = None
        self._run_length = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"probe-{kind}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _setting(self, name: str, default: int) -> int:
        value = self.probe.get(name)
        return default if value is None else int(value)

    def _loop(self) -> None:
        delay = self._setting("initialDelaySeconds", 0)
        period = max(self._setting("periodSeconds", 10), 1)
        timeout = max(self._setting("timeoutSeconds", 1), 1)
        failure_threshold = max(self._setting("failureThreshold", 3), 1)
        success_threshold = max(self._setting("successThreshold", 1), 1)
        wait = max(0.0, self.started_at + delay - time.monotonic())
        while not self._stop.wait(wait):
            wait = period
            if not self.gate():
                wait = 0.2
                continue
            ok, message = run_action(self.probe, self.target, timeout)
            if self._stop.is_set():
                return
            self._run_length = self._run_length + 1 if ok == self._last else 1
            self._last = ok
            if not ok:
                with contextlib.suppress(Exception):
                    self.on_failure(self.kind, message)
            threshold = success_threshold if ok else failure_threshold
            if self._run_length >= threshold:
                self.result = ok
                if self.kind == "startup" and ok:
                    return  # a started container is never probed for startup again
                if self.kind in ("liveness", "startup") and not ok:
                    return  # on hold until the container restarts (a new worker)
