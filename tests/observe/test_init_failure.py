"""``segue.operator.observe.pods.init_failure``: an init container that keeps a pod from
starting, as the client model, a raw object and the pod runner report it."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from segue.operator.observe import pod_state
from segue.operator.observe.pods import InitFailure
from segue.protocol.names import APP_LABEL

from .test_pods import app_pods, wait

COPY = ["cp", "/opt/segue/segue-kstreams.jar", "$(SEGUE_POD_ROOT)/segue/agent/a.jar"]


def failing(*, state: dict[str, Any], last: dict[str, Any] | None = None) -> dict[str, Any]:
    """A raw pod whose init container ``segue-agent`` is in ``state`` (``last``: before)."""
    seen = {"name": "segue-agent", "state": state, "restartCount": 1 if last else 0}
    if last is not None:
        seen["lastState"] = last
    return {
        "metadata": {"name": "ks-0", "uid": "u"},
        "spec": {
            "initContainers": [
                {
                    "name": "segue-agent",
                    "image": "segue:0.1.0",
                    "command": COPY[:1],
                    "args": COPY[1:],
                }
            ],
            "containers": [{"name": "worker", "image": "app:1"}],
        },
        "status": {"phase": "Pending", "initContainerStatuses": [seen]},
    }


FAILED = {"terminated": {"exitCode": 1, "reason": "Error", "message": "cp: cannot stat\n"}}
EXPECTED = InitFailure("segue-agent", "segue:0.1.0", tuple(COPY), 1, "cp: cannot stat")


def test_an_init_container_that_failed_and_has_not_succeeded_since() -> None:
    assert pod_state(failing(state=FAILED)).init_failure == EXPECTED
    backoff = {"waiting": {"reason": "CrashLoopBackOff"}}
    assert pod_state(failing(state=backoff, last=FAILED)).init_failure == EXPECTED
    retrying = {"running": {"startedAt": "2026-03-01T12:00:00Z"}}  # between two failures
    assert pod_state(failing(state=retrying, last=FAILED)).init_failure == EXPECTED


def test_an_init_container_that_succeeded_or_has_not_run_is_no_failure() -> None:
    done = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    assert pod_state(failing(state=done, last=FAILED)).init_failure is None  # failed, then not
    assert pod_state(failing(state={"waiting": {"reason": "PodInitializing"}})).init_failure is None
    assert pod_state({"metadata": {"name": "p"}}).init_failure is None
    sidecar = failing(state=FAILED)
    sidecar["spec"]["initContainers"][0]["restartPolicy"] = "Always"  # restarted, not awaited
    assert pod_state(sidecar).init_failure is None


def test_the_client_model_reduces_like_the_raw_object() -> None:
    ended = client.V1ContainerStateTerminated(
        exit_code=1, reason="Error", message="cp: cannot stat\n"
    )
    model = client.V1Pod(
        metadata=client.V1ObjectMeta(name="ks-0", uid="u"),
        spec=client.V1PodSpec(
            init_containers=[
                client.V1Container(
                    name="segue-agent", image="segue:0.1.0", command=COPY[:1], args=COPY[1:]
                )
            ],
            containers=[client.V1Container(name="worker", image="app:1")],
        ),
        status=client.V1PodStatus(
            phase="Pending",
            init_container_statuses=[
                client.V1ContainerStatus(
                    name="segue-agent",
                    image="segue:0.1.0",
                    image_id="",
                    ready=False,
                    restart_count=1,
                    state=client.V1ContainerState(
                        waiting=client.V1ContainerStateWaiting(reason="CrashLoopBackOff")
                    ),
                    last_state=client.V1ContainerState(terminated=ended),
                )
            ],
        ),
    )
    assert pod_state(model).init_failure == EXPECTED


def test_the_pod_runner_reports_a_failing_init_container(
    kube_api: Any, namespace: str, pod_runner: Any
) -> None:
    core = client.CoreV1Api(kube_api)
    missing = "/nonexistent/segue-kstreams.jar"
    body = {
        "metadata": {"name": "init-0", "labels": {APP_LABEL: "init"}},
        "spec": {
            "initContainers": [
                {"name": "segue-agent", "image": "segue:dev", "command": ["cp", missing, "x"]}
            ],
            "containers": [{"name": "app", "image": "unused", "command": ["sleep", "600"]}],
            "terminationGracePeriodSeconds": 1,
        },
    }
    core.create_namespaced_pod(namespace, body)
    seen: dict[str, Any] = {}

    def failed() -> bool:
        seen.update(app_pods(core, namespace, "init"))
        return seen["init-0"].init_failure is not None

    wait(failed, "the init container's failure")
    state = seen["init-0"]
    assert state.phase == "Pending"
    assert state.init_failure == InitFailure(
        "segue-agent", "segue:dev", ("cp", missing, "x"), 1, ""
    )
