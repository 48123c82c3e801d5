"""Segue's side: the operator process and WordCount worker pods under the pod runner (the
pieces of ``bench.operator`` and the operator's end-to-end tests), with the same scaling
settings Kafka Streams runs with (acceptable lag 10,000, 2 warmups, one standby).

A :class:`PodWatch` thread scrapes every pod's ``/metrics`` four times a second, keeping
each pod's stateful actives (``1_*`` tasks it runs as active) and its restore counters;
*balanced* is the operator's ``Balanced`` condition with every pod ready. A
:class:`Generations` thread watches the assignment ConfigMap, so every published generation
is seen (``moves``), and :class:`~.cpu.Usage` samples each pod's CPU; the run keeps the
pods' logs for the handover trace (``trace``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kubernetes import watch

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.observe.scrape import ScrapeError, WorkerReport, scrape
from segue.protocol import decode_configmap
from segue.protocol.names import DEFAULT_METRICS_PORT, assignment_configmap
from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess
from tests.operator.test_e2e_scaling import wordcount

from .cpu import Usage
from .events import STATEFUL
from .moves import Owners

NAME = "wc"


class PodWatch(threading.Thread):
    """Per pod: the peak of stateful actives seen since ``since``, and its last report."""

    def __init__(self, apps: Apps) -> None:
        super().__init__(daemon=True)
        self.apps = apps
        self.since = float("inf")
        self.peak = 0
        self.reports: dict[str, WorkerReport] = {}
        self.baseline: dict[str, WorkerReport] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.25):
            try:
                pods = self.apps.pods(NAME)
            except Exception:  # the API server is busy: look again
                continue
            for name, pod in pods.items():
                if not pod.status.pod_ip:
                    continue
                try:
                    report = scrape(pod.status.pod_ip, DEFAULT_METRICS_PORT)
                except ScrapeError:
                    continue
                self.reports[name] = report
                if time.time() >= self.since:
                    self.peak = max(self.peak, stateful_actives(report))

    def mark(self) -> None:
        """The scale request: restore counters count from here, peaks too."""
        self.baseline = dict(self.reports)
        self.peak = max((stateful_actives(r) for r in self.reports.values()), default=0)
        self.since = time.time()

    def restored(self) -> tuple[int, int]:
        """Changelog records and key+value bytes restored since :meth:`mark` into copies a pod
        did not hold then (a standby following the tail of a copy it kept is no restore)."""
        records = bytes_ = 0
        for pod, report in self.reports.items():
            before = self.baseline.get(pod, WorkerReport())
            for task, n in report.restored_records.items():
                if task not in before.roles:
                    records += n - before.restored_records.get(task, 0)
                    bytes_ += report.restored_bytes.get(task, 0)
                    bytes_ -= before.restored_bytes.get(task, 0)
        return records, bytes_

    def stop(self) -> None:
        self.stopped.set()
        self.join(10)


class Generations(threading.Thread):
    """Every generation the operator publishes: (when seen, generation, active owners)."""

    def __init__(self, apps: Apps) -> None:
        super().__init__(daemon=True)
        self.apps = apps
        self.seen: list[tuple[float, int, Owners]] = []
        self.watch = watch.Watch()
        self.stopped = threading.Event()

    def run(self) -> None:
        name = assignment_configmap(NAME)
        while not self.stopped.is_set():
            try:
                for event in self.watch.stream(
                    self.apps.core.list_namespaced_config_map,
                    self.apps.namespace,
                    field_selector=f"metadata.name={name}",
                    timeout_seconds=300,
                ):
                    cm = event["object"]
                    doc = decode_configmap(cm.data, cm.binary_data)
                    if self.seen and doc.generation <= self.seen[-1][1]:
                        continue
                    owners = {t: m for m, r in doc.members.items() for t in r.active}
                    self.seen.append((time.time(), doc.generation, owners))
            except Exception:  # the API server is busy: watch again
                time.sleep(0.2)

    def since(self, when: float) -> list[tuple[float, int, Owners]]:
        """The generation in force at ``when`` and every one after it."""
        before = [g for g in self.seen if g[0] <= when]
        return before[-1:] + [g for g in self.seen if g[0] > when]

    def stop(self) -> None:
        self.stopped.set()
        self.watch.stop()


def stateful_actives(report: WorkerReport) -> int:
    return sum(1 for t, role in report.roles.items() if role == "active" and t.startswith(STATEFUL))


def delete_app(apps: Apps, operator: Any, name: str = NAME) -> None:
    """Delete StreamApp ``name`` and wait for its pods to go while ``operator`` still
    runs its finalizer; then stop the operator."""
    try:
        apps.custom.delete_namespaced_custom_object(GROUP, VERSION, apps.namespace, PLURAL, name)
        deadline = time.monotonic() + 60
        while (apps.exists(name) or apps.pods(name)) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        operator.stop()


class SegueApp:
    """One StreamApp under a fresh operator in its own namespace."""

    def __init__(
        self,
        api: Any,
        *,
        bootstrap: str,
        namespace: str,
        replicas: int,
        kubeconfig: Path,
        log: Path,
    ) -> None:
        self.body, self.source, self.output = wordcount(
            SimpleNamespace(bootstrap_servers=bootstrap),
            NAME,
            replicas,
            acceptableRecoveryLag=10_000,
            maxWarmupReplicas=2,
            numStandbyReplicas=1,
            # the default, not the tests' 5 s: under the starting pods' CPU load a third
            # pod reported after 5 s and split one scale into two batches (issue 24)
            expansionTimeoutSeconds=30,
        )
        self.application = self.body["spec"]["applicationId"]
        self.apps = Apps(api, namespace)
        self.operator = OperatorProcess(kubeconfig, namespace, log)
        self.watch = PodWatch(self.apps)
        self.generations = Generations(self.apps)
        self.usage = Usage(self.pids)

    def start(self) -> None:
        self.operator.start()
        self.apps.create(self.body)
        self.watch.start()
        self.generations.start()
        self.usage.start()

    def pids(self) -> dict[str, int]:
        """Each running pod's container process (``segue://<pid>``), and the operator's."""
        out = {}
        for name, pod in self.apps.pods(NAME).items():
            for c in pod.status.container_statuses or ():
                if c.container_id and c.container_id.startswith("segue://"):
                    out[name] = int(c.container_id.removeprefix("segue://"))
        if self.operator.proc is not None:
            out["operator"] = self.operator.proc.pid
        return out

    def pod_logs(self) -> dict[str, str]:
        """Each pod's log as the API server serves it (the pod runner's log files)."""
        out = {}
        for name in self.apps.pods(NAME):
            try:
                out[name] = self.apps.core.read_namespaced_pod_log(name, self.apps.namespace)
            except Exception as exc:  # a pod just deleted: say so in its place
                out[name] = f"(no log: {exc})"
        return out

    def balanced(self, replicas: int) -> bool:
        return self.apps.balanced(NAME, replicas)

    def scale(self, replicas: int) -> None:
        self.watch.mark()
        self.apps.scale(NAME, replicas)

    def diagnose(self) -> str:
        return f"{self.apps.status(NAME)}\n{self.operator.logs()[-3000:]}"

    def final_stateful(self) -> list[int]:
        return sorted(stateful_actives(r) for r in self.watch.reports.values())

    def stop(self) -> None:
        """Delete the app (its pods go) while the operator still runs its finalizer."""
        self.watch.stop()
        self.generations.stop()
        self.usage.stop()
        delete_app(self.apps, self.operator)
