"""Helpers of the operator's end-to-end tests: the operator as a real process, StreamApp
manifests that run the example apps under the pod runner, and ways to watch them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from kubernetes import client

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.status import Condition, StreamAppStatus, find_condition
from segue.stack.process import free_port

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


class Apps:
    """StreamApps of one namespace through the real API server."""

    def __init__(self, api_client: Any, namespace: str) -> None:
        self.custom = client.CustomObjectsApi(api_client)
        self.core = client.CoreV1Api(api_client)
        self.namespace = namespace

    def create(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body)

    def get(self, name: str) -> dict[str, Any]:
        obj: dict[str, Any] = self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name
        )
        return obj

    def exists(self, name: str) -> bool:
        try:
            self.get(name)
        except client.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def configmaps(self, name: str) -> list[str]:
        items = self.core.list_namespaced_config_map(
            self.namespace, label_selector=f"segue.dev/app={name}"
        ).items
        return [c.metadata.name for c in items]

    def status(self, name: str) -> StreamAppStatus:
        """Read through the operator's own status model, as users' tools would."""
        return StreamAppStatus.model_validate(self.get(name).get("status") or {})

    def scale(self, name: str, replicas: int) -> None:
        """Through the /scale subresource, as ``kubectl scale`` and an HPA do."""
        self.custom.patch_namespaced_custom_object_scale(
            GROUP, VERSION, self.namespace, PLURAL, name, {"spec": {"replicas": replicas}}
        )

    def pods(self, name: str) -> dict[str, Any]:
        items = self.core.list_namespaced_pod(
            self.namespace, label_selector=f"segue.dev/app={name}"
        ).items
        return {p.metadata.name: p for p in items}

    def events(self, name: str) -> list[tuple[str, str]]:
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name}"
        ).items
        return [(e.reason, e.message) for e in items]

    def event_counts(self, name: str) -> dict[str, list[int]]:
        """reason -> the count of each Event object with that reason."""
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name}"
        ).items
        counts: dict[str, list[int]] = {}
        for e in items:
            counts.setdefault(e.reason, []).append(e.count or 1)
        return counts

    def learning(self, name: str) -> bool:
        """Some member holds a learner copy (a scale-up in flight, nothing handed yet)."""
        return any(m.learning for m in self.status(name).members or [])

    def condition(self, name: str, kind: str) -> Condition | None:
        return find_condition(self.status(name).conditions, kind)

    def balanced(self, name: str, replicas: int) -> bool:
        status = self.status(name)
        members = status.members or []
        actives = [m.active for m in members]
        balanced = find_condition(status.conditions, "Balanced")
        return (
            balanced is not None
            and balanced.status == "True"
            and len(members) == replicas
            and all(m.role == "member" for m in members)
            and status.ready_replicas == replicas
            and bool(actives)
            and max(actives) - min(actives) <= 1
            and len(self.pods(name)) == replicas
        )


def wait_for(
    what: str, check: Callable[[], bool], timeout: float, diagnose: Callable[[], str]
) -> float:
    """Poll ``check`` until it holds; the seconds it took. Fails with ``diagnose()``."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout:.0f}s\n{diagnose()}")
        time.sleep(0.25)
    return time.monotonic() - start


class SteadyInput(threading.Thread):
    """Writes ``rate`` records/s; record ``i`` is ``make(i) -> (key, value, counted)``,
    and ``sent`` counts each ``counted`` name (a word, a key) as acknowledged input."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        rate: float,
        make: Callable[[int], tuple[str, str, str]],
        **config: Any,
    ) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, **config})
        self.topic, self.rate, self.make = topic, rate, make
        self.sent: dict[str, int] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        start, i = time.monotonic(), 0
        while not self.stopped.is_set():
            delay = start + i / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(min(delay, 0.05))
                continue
            key, value, counted = self.make(i)
            self.producer.produce(self.topic, key=key, value=value)
            self.sent[counted] = self.sent.get(counted, 0) + 1
            self.producer.poll(0)
            i += 1
        assert self.producer.flush(30) == 0

    def stop(self) -> dict[str, int]:
        self.stopped.set()
        self.join(60)
        return dict(self.sent)


def text_input(bootstrap: str, topic: str, words: int, rate: float, **config: Any) -> SteadyInput:
    """WordCount's input: line ``i`` is the word ``w<i mod words>``; ``config`` goes
    to the producer (e.g. ``enable.idempotence``, so a broker restart cannot
    duplicate a line)."""

    def line(i: int) -> tuple[str, str, str]:
        return str(i), f"w{i % words}", f"w{i % words}"

    return SteadyInput(bootstrap, topic, rate, line, **config)


def keyed_input(bootstrap: str, topic: str, keys: int, rate: float) -> SteadyInput:
    """Keys ``k0..k<n>`` placed by the Java-compatible murmur2 partitioner, so after the
    topic grows every key lands where Kafka Streams' clients would put it."""

    def record(i: int) -> tuple[str, str, str]:
        return f"k{i % keys}", str(i), f"k{i % keys}"

    return SteadyInput(
        bootstrap,
        topic,
        rate,
        record,
        partitioner="murmur2_random",
        **{"topic.metadata.refresh.interval.ms": 1000},
    )


def exact_counts(records: list[Any], sent: dict[str, int]) -> None:
    """WordCount under exactly-once: each word's committed counts are exactly 1..n."""
    counts: dict[str, list[int]] = {}
    for _, _, key, value in records:
        counts.setdefault(key.decode(), []).append(int.from_bytes(value, "big", signed=True))
    for word, n in sent.items():
        got = sorted(counts.get(word, []))
        assert got == list(range(1, n + 1)), (
            f"{word}: {len(got)} counts for {n} lines; off by: "
            f"{sorted(set(range(1, n + 1)) ^ set(got))[:10]}"
        )
    assert set(counts) <= set(sent), set(counts) - set(sent)
