"""``segue.operator.observe.pods``: pods reduced to PodState.

``pod_state`` is pure and is tested on constructed ``V1Pod`` objects; then on the
raw objects the real API server returns (what the operator's Kopf index of pods is
fed), with the pod runner playing the kubelet."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client

from segue.operator.observe import PodState, pod_state
from segue.protocol.names import APP_LABEL
from segue.stack.kubelet.ipam import is_pod_address

CREATED = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def pod(
    *,
    status: client.V1PodStatus | None = None,
    deletion: datetime | None = None,
    labels: dict[str, str] | None = None,
) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name="wordcount-0",
            uid="6f1c3c2e-0000-4000-8000-000000000001",
            creation_timestamp=CREATED,
            deletion_timestamp=deletion,
            labels=labels,
        ),
        status=status,
    )


def container(name: str, restarts: int) -> client.V1ContainerStatus:
    return client.V1ContainerStatus(
        name=name, image="segue", image_id="", ready=True, restart_count=restarts
    )


def test_a_running_ready_pod() -> None:
    status = client.V1PodStatus(
        phase="Running",
        pod_ip="10.1.2.3",
        conditions=[
            client.V1PodCondition(type="PodScheduled", status="True"),
            client.V1PodCondition(type="Ready", status="True"),
        ],
        container_statuses=[container("worker", 2), container("sidecar", 1)],
        init_container_statuses=[container("init", 5)],
    )
    labels = {APP_LABEL: "wordcount", "app.kubernetes.io/managed-by": "segue"}
    assert pod_state(pod(status=status, labels=labels)) == PodState(
        name="wordcount-0",
        phase="Running",
        ip="10.1.2.3",
        ready=True,
        terminating=False,
        restarts=3,  # containers only: init containers' restarts are not the member's
        uid="6f1c3c2e-0000-4000-8000-000000000001",
        created=CREATED.timestamp(),
        labels=labels,
    )


def test_a_pod_that_is_not_ready_and_terminating() -> None:
    status = client.V1PodStatus(
        phase="Running",
        pod_ip="10.1.2.3",
        conditions=[client.V1PodCondition(type="Ready", status="False")],
        container_statuses=[container("worker", 0)],
    )
    state = pod_state(pod(status=status, deletion=datetime(2026, 3, 1, 12, 5, tzinfo=UTC)))
    assert (state.phase, state.ready, state.terminating, state.restarts) == (
        "Running",
        False,
        True,
        0,
    )


def test_a_pod_just_created() -> None:
    state = pod_state(pod())
    assert state == PodState(
        name="wordcount-0",
        phase="Pending",
        ip=None,
        ready=False,
        terminating=False,
        restarts=0,
        uid="6f1c3c2e-0000-4000-8000-000000000001",
        created=CREATED.timestamp(),
        labels={},
    )
    empty_ip = pod(status=client.V1PodStatus(phase="Pending", pod_ip=""))
    assert pod_state(empty_ip).ip is None


def test_timestamps_as_text_and_a_pod_without_a_name() -> None:
    text = client.V1Pod(
        metadata=client.V1ObjectMeta(name="p", creation_timestamp="2026-03-01T12:00:00Z")
    )
    assert pod_state(text).created == CREATED.timestamp()
    assert pod_state(client.V1Pod(metadata=client.V1ObjectMeta(name="p"))).created is None
    with pytest.raises(ValueError, match=r"metadata\.name"):
        pod_state(client.V1Pod(metadata=client.V1ObjectMeta()))


def python(script: str) -> list[str]:
    return [sys.executable, "-c", script]


def make_pod(name: str, app: str, command: list[str], **spec: Any) -> client.V1Pod:
    return client.V1Pod.from_dict(
        {
            "metadata": {"name": name, "labels": {APP_LABEL: app}, **spec.pop("meta", {})},
            "spec": {
                "containers": [{"name": "worker", "image": "unused", "command": command}],
                "terminationGracePeriodSeconds": 1,
                **spec,
            },
        }
    )


def wait(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def app_pods(core: client.CoreV1Api, namespace: str, app: str) -> dict[str, PodState]:
    """An app's pods as raw objects, as a watch delivers them to the index, reduced."""
    listed = core.list_namespaced_pod(namespace, label_selector=f"{APP_LABEL}={app}").items
    raw = [core.api_client.sanitize_for_serialization(p) for p in listed]
    return {s.name: s for s in (pod_state(r) for r in raw)}


def test_raw_pods_from_the_api_server(kube_api: Any, namespace: str, pod_runner: Any) -> None:
    core = client.CoreV1Api(kube_api)
    sleep = python("import time; time.sleep(600)")
    started = time.time()
    running = core.create_namespaced_pod(namespace, make_pod("app-0", "app", sleep))
    core.create_namespaced_pod(namespace, make_pod("app-1", "app", python("raise SystemExit(1)")))
    # No node matches: it stays Pending, and a finalizer keeps it Terminating once deleted.
    core.create_namespaced_pod(
        namespace,
        make_pod(
            "app-2",
            "app",
            sleep,
            nodeSelector={"segue.dev/nowhere": "true"},
            meta={"finalizers": ["segue.dev/test-hold"]},
        ),
    )
    core.create_namespaced_pod(namespace, make_pod("other-0", "other", sleep))
    core.delete_namespaced_pod("app-2", namespace)
    try:
        pods: dict[str, PodState] = {}

        def settled() -> bool:
            pods.clear()
            pods.update(app_pods(core, namespace, "app"))
            return pods["app-0"].ready and pods["app-1"].restarts >= 1

        wait(settled, "app-0 ready and app-1 restarted")
        assert set(pods) == {"app-0", "app-1", "app-2"}
        first = pods["app-0"]
        assert first.phase == "Running"
        assert first.ip is not None
        assert is_pod_address(first.ip), first.ip
        assert (first.terminating, first.restarts) == (False, 0)
        assert first.uid == running.metadata.uid
        assert first.created is not None
        assert started - 2 <= first.created <= time.time() + 1
        assert first.labels == {APP_LABEL: "app"}
        assert pods["app-1"].restarts >= 1  # the pod runner restarts it as the kubelet would
        held = pods["app-2"]
        # The controller-manager's pod GC marks a deleted pod no node ever took Failed,
        # sooner or later: either phase is the truth at the moment it is read.
        assert held.phase in {"Pending", "Failed"}
        assert (held.ip, held.ready, held.terminating) == (None, False, True)
        assert app_pods(core, namespace, "nothing") == {}
    finally:
        core.patch_namespaced_pod("app-2", namespace, {"metadata": {"finalizers": None}})


def test_a_raw_object_reduces_like_the_client_model() -> None:
    status = client.V1PodStatus(
        phase="Running",
        pod_ip="10.1.2.3",
        conditions=[client.V1PodCondition(type="Ready", status="True")],
        container_statuses=[container("worker", 2)],
    )
    model = pod(status=status, deletion=datetime(2026, 3, 1, 12, 5, tzinfo=UTC), labels={"a": "b"})
    raw = client.ApiClient().sanitize_for_serialization(model)
    assert pod_state(raw) == pod_state(model)
    with pytest.raises(ValueError, match=r"metadata\.name"):
        pod_state({"metadata": {}})
