"""Two operator replicas and one Lease: only the holder acts; kill it mid-scale-up and
the standby takes over within the lease's bound, finishes the scale with every count
exact, and no generation is ever published twice or by two replicas."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch

from segue.operator.api.names import PUBLISHED_BY
from segue.protocol.document import GENERATION_KEY
from segue.protocol.names import assignment_configmap
from segue.stack.apps import Apps

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import assert_exact, diagnose, merge, running, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
LEASE, RENEW, RETRY = 6, 4.0, 0.5


class Publications(threading.Thread):
    """Every write of the app's assignment ConfigMap, in order: (generation, publisher)."""

    def __init__(self, api: Any, namespace: str, app: str) -> None:
        super().__init__(daemon=True)
        self.core, self.namespace, self.name = client.CoreV1Api(api), namespace, app
        self.seen: list[tuple[int, str]] = []
        self.watch = watch.Watch()
        self.stopped = False

    def run(self) -> None:
        try:
            self._follow()
        except Exception:  # the stream cut by stop() ends the thread quietly
            if not self.stopped:
                raise

    def _follow(self) -> None:
        for event in self.watch.stream(
            self.core.list_namespaced_config_map,
            self.namespace,
            field_selector=f"metadata.name={assignment_configmap(self.name)}",
            timeout_seconds=600,
        ):
            cm = event["object"]
            if event["type"] in ("ADDED", "MODIFIED"):
                publisher = (cm.metadata.annotations or {}).get(PUBLISHED_BY, "")
                entry = (int(cm.data[GENERATION_KEY]), publisher)
                if not self.seen or self.seen[-1] != entry:  # a relist repeats the last
                    self.seen.append(entry)

    def stop(self) -> None:
        self.stopped = True
        self.watch.stop()


def holder(kube_api: Any, namespace: str) -> str | None:
    try:
        lease = client.CoordinationV1Api(kube_api).read_namespaced_lease(
            "segue-operator", namespace
        )
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return str(lease.spec.holder_identity or "") or None


@pytest.fixture
def replicas(
    kube: Any, kube_api: Any, namespace: str, tmp_path: Path, streamapp_crd: Any
) -> Iterator[tuple[OperatorProcess, OperatorProcess]]:
    """Replicas ``a`` and ``b`` of the operator, sharing one Lease; ``a`` leads."""
    election = [
        "--leader-elect",
        f"--lease-namespace={namespace}",
        f"--lease-duration={LEASE}",
        f"--renew-deadline={RENEW}",
        f"--retry-period={RETRY}",
    ]
    a = OperatorProcess(kube.kubeconfig, namespace, tmp_path, *election, "--identity=a", name="a")
    b = OperatorProcess(kube.kubeconfig, namespace, tmp_path, *election, "--identity=b", name="b")
    a.start()
    try:
        wait_for("a leads", lambda: holder(kube_api, namespace) == "a", 60, a.logs)
        b.start()
        yield a, b
    finally:
        a.stop()
        b.stop()


def _answers(operator: OperatorProcess) -> bool:
    try:
        operator.metrics()
    except OSError:  # not listening yet
        return False
    return True


def test_the_standby_takes_over_a_killed_leader_mid_scale_up(
    kube_api: Any,
    kafka: Any,
    pod_runner: Any,
    apps: Apps,
    replicas: tuple[OperatorProcess, OperatorProcess],
) -> None:
    a, b = replicas
    namespace = apps.namespace
    publications = Publications(kube_api, namespace, "wc")
    publications.start()
    try:
        body, source, output = wordcount(kafka, "wc", 2, env={"SEGUE_STANDBY_RESTORE_RATE": "300"})
        why, before, producer = running(
            kafka, apps, a, pod_runner, body=body, source=source, replicas=2, lines=6000, rate=100
        )
        # b stands by: it writes nothing (its endpoint may still be starting on a busy machine)
        wait_for("b's metrics", lambda: _answers(b), 60, b.logs)
        assert "segue_operator_leader 0.0" in b.metrics()
        assert "segue_operator_leader 1.0" in a.metrics()
        try:
            apps.scale("wc", 4)
            wait_for("learners in flight", lambda: apps.learning("wc"), 60, why)
            a.kill()  # SIGKILL mid-scale: the lease is not released
            killed = time.monotonic()
            wait_for("b leads", lambda: holder(kube_api, namespace) == "b", LEASE + 10, b.logs)
            took_over = time.monotonic() - killed
            wait_for("4 pods balanced", lambda: apps.balanced("wc", 4), 240, diagnose(
                apps, "wc", b, pod_runner))  # fmt: skip
        finally:
            sent = merge(before, producer.stop())
        assert_exact(kafka, output, sent)
    finally:
        publications.stop()
    # b waited out a's last renewal (at most one retry before the kill) plus its own
    # polling; it never took over early.
    assert took_over <= LEASE + 2 * RETRY + 1.0, took_over
    generations = [g for g, _ in publications.seen]
    publishers = [p for _, p in publications.seen]
    assert generations == list(range(generations[0], generations[0] + len(generations)))
    assert set(publishers) == {"a", "b"}, publications.seen
    switch = publishers.index("b")
    assert set(publishers[:switch]) == {"a"}
    assert set(publishers[switch:]) == {"b"}
    assert "acquired by b" in b.logs()
    print(f"failover: b took over {took_over:.1f}s after a was killed (lease {LEASE}s)")
