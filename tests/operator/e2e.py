"""Helpers of the operator's end-to-end tests: the operator as a real process, StreamApp
manifests that run the example apps under the pod runner, and ways to watch them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from segue.operator.api import GROUP, VERSION
from segue.stack.apps import Apps
from segue.stack.process import free_port
from tests.timing import note_wait

ROOT = Path(__file__).resolve().parents[2]


class OperatorProcess:
    """``segue operator`` against the session's API server, watching one namespace."""

    def __init__(
        self, kubeconfig: Path, namespace: str, log_dir: Path, *extra: str, name: str = "operator"
    ) -> None:
        self.kubeconfig, self.namespace, self.log_dir = kubeconfig, namespace, log_dir
        self.extra, self.name = extra, name
        self.metrics_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> OperatorProcess:
        self.starts += 1
        log = open(self.log_dir / f"{self.name}-{self.starts}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "segue",
                "operator",
                "--kubeconfig",
                str(self.kubeconfig),
                "--namespace",
                self.namespace,
                "--metrics-port",
                str(self.metrics_port),
                "--busy-interval",
                "0.3",
                "--idle-interval",
                "2",
                *self.extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        return self

    def kill(self) -> None:
        """SIGKILL: no chance to clean up, as when a node dies."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.read().decode()

    def samples(self, app: str, prefix: str = "segue_app_") -> dict[str, float]:
        """The app's samples on the operator's /metrics whose name starts with ``prefix``
        (labelled by the namespace and the app alone)."""
        labels = {"namespace": self.namespace, "app": app}
        return {
            s.name: float(s.value)
            for family in text_string_to_metric_families(self.metrics())
            for s in family.samples
            if s.name.startswith(prefix) and s.labels == labels
        }

    def logs(self) -> str:
        return "".join(
            p.read_text(errors="replace")[-20000:]
            for p in sorted(self.log_dir.glob(f"{self.name}-*.log"))
        )


def worker_command(app: str, **app_args: str) -> list[str]:
    command = [sys.executable, "-m", "segue", "worker", "--app", app]
    for key, value in app_args.items():
        command += ["--app-arg", f"{key}={value}"]
    return command


PROBE_PERIOD = 1  # seconds: spec.probes.periodSeconds of the tests' apps


def streamapp(
    name: str,
    *,
    application_id: str,
    bootstrap: str,
    command: list[str],
    replicas: int,
    topology: list[dict[str, Any]] | None = None,
    scaling: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "applicationId": application_id,
        "kafka": {"bootstrapServers": bootstrap},
        "template": {
            "image": "segue:dev",
            "command": command,
            "env": [{"name": "SEGUE_COMMIT_INTERVAL_MS", "value": "100"}],
        },
        "scaling": {"expansionTimeoutSeconds": 5, **(scaling or {})},
        # ready within a second of it: the apps of the README and of the demo keep the
        # default period (2 s)
        "probes": {"periodSeconds": PROBE_PERIOD},
    }
    if topology is not None:
        spec["topology"] = {"subTopologies": topology}
    if state is not None:
        spec["state"] = state
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "StreamApp",
        "metadata": {"name": name},
        "spec": spec,
    }


def wait_for(
    what: str, check: Callable[[], bool], timeout: float, diagnose: Callable[[], str]
) -> float:
    """Poll ``check`` until it holds; the seconds it took. Fails with ``diagnose()``."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            note_wait(what, time.monotonic() - start, timeout)
            raise AssertionError(f"{what}: not within {timeout:.0f}s\n{diagnose()}")
        time.sleep(0.25)
    took = time.monotonic() - start
    note_wait(what, took, timeout)
    return took


def wait_event(
    apps: Apps, name: str, reason: str, message: str | None = None, timeout: float = 30
) -> float:
    """Wait for ``name``'s event of ``reason`` (and ``message``, if given): an event
    follows the status patch that says the same, so a test that read the status first
    may look before it is written."""

    def said() -> bool:
        return any(r == reason and message in (None, m) for r, m in apps.events(name))

    return wait_for(f"the {reason} event", said, timeout, lambda: str(apps.events(name)))


class CountsOff(AssertionError):
    """Exact counts failed; ``word`` is the first word off, read from ``partition``."""

    def __init__(self, message: str, word: str, partition: int) -> None:
        super().__init__(message)
        self.word, self.partition = word, partition


def exact_counts(
    records: list[Any], sent: dict[str, int], count: Callable[[bytes], int] | None = None
) -> None:
    """WordCount under exactly-once: each word's committed counts are exactly 1..n.
    ``count`` reads a value (default: Segue's WordCount, a big-endian integer). A
    failure names every word that is off, and where the first one's counts stop
    running on (partition@offset of each count around the break): the evidence to
    find the transaction in the broker's log."""
    read = count or (lambda value: int.from_bytes(value, "big", signed=True))
    counts: dict[str, list[tuple[int, str]]] = {}
    for partition, offset, key, value in records:
        counts.setdefault(key.decode(), []).append((read(value), f"{partition}@{offset}"))
    off = {}
    for word, n in sent.items():
        got = sorted(v for v, _ in counts.get(word, []))
        if got != list(range(1, n + 1)):
            off[word] = (n, got)
    if off:
        word, (n, got) = next(iter(off.items()))
        wrong = sorted(set(range(1, n + 1)) ^ set(got))
        order = counts.get(word, [])  # as read: in offset order within the partition
        at = next((i for i, (v, _) in enumerate(order) if v != i + 1), 0)
        around = [f"{v}:{where}" for v, where in order[max(0, at - 3) : at + 4]]
        others = {w: len(g) - m for w, (m, g) in off.items() if w != word}
        raise CountsOff(
            f"{word}: {len(got)} counts for {n} lines; off by: {wrong[:10]}; around the "
            f"break: {around}; {len(off)} word(s) off (others, counts - lines: {others})",
            word,
            int(order[at][1].split("@")[0]) if order else -1,
        )
    assert set(counts) <= set(sent), set(counts) - set(sent)
