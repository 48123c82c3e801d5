"""The pod runner plays the kubelet for real: pods on the real apiserver run as
local processes, with their own address, ServiceAccount token, volumes, probes,
restarts and a kubelet's termination lifecycle. See docs/pod-runner.md.

Container commands are small inline Python scripts run by this interpreter.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from segue.stack.kubelet import PodRunner
from segue.stack.kubelet.ipam import is_pod_address

pytestmark = pytest.mark.smoke

T = TypeVar("T")
TIMEOUT = 60.0


def python(script: str, *args: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(script), *args]


def container(name: str, script: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "unused", "command": python(script, *args), **extra}


def pod_ip_env() -> list[dict[str, Any]]:
    return [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]


def condition(pod: client.V1Pod, kind: str) -> str | None:
    for c in pod.status.conditions or []:
        if c.type == kind:
            return str(c.status)
    return None


def process_alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class Cluster:
    """The test's namespace on the real apiserver, and the pod runner's files.
    A wait that times out says what the pods, their events and logs were."""

    def __init__(self, api: client.ApiClient, namespace: str, runner: PodRunner) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace
        self.runner = runner

    def pod(self, name: str) -> client.V1Pod | None:
        try:
            return self.core.read_namespaced_pod(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def create_pod(self, name: str, labels: dict[str, str] | None = None, **spec: Any) -> Any:
        manifest = {"metadata": {"name": name, "labels": labels or {}}, "spec": spec}
        return self.core.create_namespaced_pod(self.namespace, client.V1Pod.from_dict(manifest))

    def log(self, pod: client.V1Pod, container_name: str) -> str:
        meta = pod.metadata
        path = self.runner.log_path(meta.namespace, meta.name, meta.uid, container_name)
        return path.read_text() if path else ""

    def wait(self, check: Callable[[], T | None], what: str, timeout: float = TIMEOUT) -> T:
        """Poll ``check`` until it returns something truthy; return that."""
        deadline = time.monotonic() + timeout
        last: T | None = None
        while time.monotonic() < deadline:
            last = check()
            if last:
                return last
            time.sleep(0.1)
        raise AssertionError(
            f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})\n{self.describe()}"
        )

    def wait_phase(self, name: str, *phases: str) -> client.V1Pod:
        def in_phase() -> client.V1Pod | None:
            pod = self.pod(name)
            return pod if pod is not None and pod.status.phase in phases else None

        return self.wait(in_phase, f"pod {name} in phase {'/'.join(phases)}")

    def wait_gone(self, name: str, timeout: float = TIMEOUT) -> None:
        self.wait(lambda: self.pod(name) is None, f"pod {name} to be removed", timeout)

    def describe(self) -> str:
        lines = []
        for pod in self.core.list_namespaced_pod(self.namespace).items:
            lines.append(f"pod {pod.metadata.name} {pod.metadata.uid} phase={pod.status.phase}")
            for c in pod.status.conditions or []:
                lines.append(f"  {c.type}={c.status} {c.reason or ''} {c.message or ''}")
            statuses = (pod.status.init_container_statuses or []) + (
                pod.status.container_statuses or []
            )
            for s in statuses:
                lines.append(f"  {s.name}: {s.state.to_dict()} restarts={s.restart_count}")
                tail = self.log(pod, s.name).splitlines()[-10:]
                lines += [f"    | {line}" for line in tail]
        for event in self.core.list_namespaced_event(self.namespace).items[-30:]:
            obj = event.involved_object
            lines.append(f"event {obj.name} {event.type} {event.reason}: {event.message}")
        return "\n".join(lines)


@pytest.fixture
def cluster(kube_api: client.ApiClient, namespace: str, pod_runner: PodRunner) -> Cluster:
    k = Cluster(kube_api, namespace, pod_runner)

    def default_account() -> bool:
        # The ServiceAccount admission plugin rejects pods until it exists.
        try:
            k.core.read_namespaced_service_account("default", namespace)
        except ApiException:
            return False
        return True

    k.wait(default_account, "the default ServiceAccount")
    return k


SERVER = """
    import http.server, os, pathlib, signal, sys, time
    data = pathlib.Path(os.environ["SEGUE_POD_ROOT"], "data")
    state = pathlib.Path(os.environ["SEGUE_POD_ROOT"], "state")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = (data / "ready").exists()
            self.send_response(200 if ok else 503)
            self.end_headers()
            self.wfile.write(os.environ["POD_IP"].encode())
        def log_message(self, *args):
            pass

    server = http.server.HTTPServer((os.environ["POD_IP"], 8080), Handler)

    def on_term(signum, frame):
        (state / "terminated").write_text(f"{os.getpid()} SIGTERM")
        time.sleep(0.5)
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)
    print("serving on", os.environ["POD_IP"], flush=True)
    server.serve_forever()
"""


def claim(name: str) -> client.V1PersistentVolumeClaim:
    return client.V1PersistentVolumeClaim.from_dict(
        {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )


def test_pod_runs_is_ready_by_probe_and_gets_sigterm_on_delete(cluster: Cluster) -> None:
    k = cluster
    k.core.create_namespaced_persistent_volume_claim(k.namespace, claim("state"))
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 1}
    created = k.create_pod(
        "web",
        containers=[
            container(
                "web",
                SERVER,
                env=pod_ip_env(),
                readinessProbe=probe,
                volumeMounts=[
                    {"name": "data", "mountPath": "/data"},
                    {"name": "state", "mountPath": "/state"},
                ],
            )
        ],
        volumes=[
            {"name": "data", "emptyDir": {}},
            {"name": "state", "persistentVolumeClaim": {"claimName": "state"}},
        ],
        terminationGracePeriodSeconds=20,
    )
    running = k.wait_phase("web", "Running")
    assert running.spec.node_name == "segue-local"
    pod_ip = running.status.pod_ip
    assert is_pod_address(pod_ip), pod_ip
    assert [i.ip for i in running.status.pod_ips] == [pod_ip]
    assert running.status.host_ip == "127.0.0.1"
    assert running.status.start_time is not None
    assert condition(running, "PodScheduled") == "True"

    # Running but not Ready while the readiness probe fails (503)...
    k.wait(lambda: k.log(running, "web").startswith("serving"), "the server to listen")
    time.sleep(2.5)  # two or more probe periods
    pod = k.pod("web")
    assert pod is not None
    assert condition(pod, "Ready") == "False"
    assert pod.status.container_statuses[0].ready is False
    assert pod.status.container_statuses[0].started is True

    # ...and Ready once the probe passes. The emptyDir is a directory on the host.
    empty_dir = k.runner.pod_dir(k.namespace, "web", created.metadata.uid) / "volumes" / "data"
    (empty_dir / "ready").write_text("yes")
    ready = k.wait(lambda: (p := k.pod("web")) and condition(p, "Ready") == "True" and p, "Ready")
    assert condition(ready, "ContainersReady") == "True"
    assert ready.status.container_statuses[0].state.running is not None
    with urllib.request.urlopen(f"http://{pod_ip}:8080/healthz", timeout=5) as answer:
        assert answer.read().decode() == pod_ip

    # Deletion: SIGTERM reaches the process, which exits; then the pod is removed.
    k.core.delete_namespaced_pod("web", k.namespace)
    state_dir = k.wait(lambda: k.runner.claim_dir(k.namespace, "state"), "the claim dir")
    marker = state_dir / "terminated"
    pid, signal_name = k.wait(lambda: marker.exists() and marker.read_text(), "a marker").split()
    assert signal_name == "SIGTERM"
    k.wait_gone("web")
    assert not process_alive(int(pid))
    assert not empty_dir.exists(), "an emptyDir is removed with its pod"
    assert state_dir.exists(), "a claim's directory outlives the pod"


STUBBORN = """
    import os, signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(os.getpid(), flush=True)
    time.sleep(3600)
"""


def test_grace_period_then_sigkill(cluster: Cluster) -> None:
    k = cluster
    k.create_pod(
        "stubborn", containers=[container("main", STUBBORN)], terminationGracePeriodSeconds=2
    )
    pod = k.wait_phase("stubborn", "Running")
    pid = int(k.wait(lambda: k.log(pod, "main").strip(), "the pid"))
    started = time.monotonic()
    k.core.delete_namespaced_pod("stubborn", k.namespace)
    k.wait_gone("stubborn", timeout=30)
    took = time.monotonic() - started
    assert took >= 1.5, f"removed after {took:.1f}s: the grace period was not honoured"
    assert not process_alive(pid)


def test_force_deleted_pod_is_killed_at_once(cluster: Cluster) -> None:
    k = cluster
    k.create_pod(
        "forced", containers=[container("main", STUBBORN)], terminationGracePeriodSeconds=300
    )
    pod = k.wait_phase("forced", "Running")
    pid = int(k.wait(lambda: k.log(pod, "main").strip(), "the pid"))
    k.core.delete_namespaced_pod("forced", k.namespace, grace_period_seconds=0)
    k.wait(lambda: not process_alive(pid), "the process to be killed", timeout=10)


IN_CLUSTER = """
    import base64, json, os
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from segue.podenv import load_incluster_config, pod_path

    api = client.CoreV1Api(client.ApiClient(load_incluster_config()))
    sa = "/var/run/secrets/kubernetes.io/serviceaccount"
    namespace = open(pod_path(sa + "/namespace")).read()
    token = open(pod_path(sa + "/token")).read()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    result = {"claims": claims["kubernetes.io"], "kubeconfig": "KUBECONFIG" in os.environ}
    me = api.read_namespaced_pod(os.environ["POD_NAME"], namespace)
    result["own_pod"] = me.metadata.name
    try:
        api.list_namespaced_secret(namespace)
        result["secrets"] = "allowed"
    except ApiException as exc:
        result["secrets"] = exc.status
    print(json.dumps(result), flush=True)
"""


def test_in_cluster_config_uses_the_pods_own_service_account_and_rbac(
    cluster: Cluster, kube_api: client.ApiClient
) -> None:
    k = cluster
    account = client.V1ServiceAccount.from_dict({"metadata": {"name": "reader"}})
    k.core.create_namespaced_service_account(k.namespace, account)
    rbac = client.RbacAuthorizationV1Api(kube_api)
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["who"]}
    role = {"metadata": {"name": "read-own-pod"}, "rules": [rule]}
    rbac.create_namespaced_role(k.namespace, client.V1Role.from_dict(role))
    binding = {
        "metadata": {"name": "reader"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "read-own-pod",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": k.namespace}],
    }
    rbac.create_namespaced_role_binding(k.namespace, client.V1RoleBinding.from_dict(binding))
    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    created = k.create_pod(
        "who",
        serviceAccountName="reader",
        restartPolicy="Never",
        containers=[container("main", IN_CLUSTER, env=env)],
    )
    done = k.wait_phase("who", "Succeeded", "Failed")
    output = k.log(done, "main")
    assert done.status.phase == "Succeeded", output
    result = json.loads(output.strip().splitlines()[-1])
    assert result["own_pod"] == "who"  # granted by the Role: allowed
    assert result["secrets"] == 403  # not granted: forbidden
    assert result["kubeconfig"] is False
    assert result["claims"]["serviceaccount"]["name"] == "reader"
    assert result["claims"]["pod"] == {"name": "who", "uid": created.metadata.uid}
    terminated = done.status.container_statuses[0].state.terminated
    assert terminated.exit_code == 0
    assert terminated.reason == "Completed"


def test_restart_policy_always_restarts_a_crashed_container(cluster: Cluster) -> None:
    k = cluster
    crash = "import sys, time; time.sleep(0.3); sys.exit(3)"
    k.create_pod("crashy", containers=[container("main", crash)])
    seen: set[str] = set()

    def restarted_thrice() -> client.V1Pod | None:
        pod = k.pod("crashy")
        if pod is None or not pod.status.container_statuses:
            return None
        status = pod.status.container_statuses[0]
        if status.state.waiting is not None:
            seen.add(status.state.waiting.reason)
        return pod if status.restart_count >= 3 else None

    pod = k.wait(restarted_thrice, "three restarts")
    status = pod.status.container_statuses[0]
    assert status.last_state.terminated.exit_code == 3
    assert status.last_state.terminated.reason == "Error"
    assert pod.status.phase == "Running"  # restartPolicy Always: never Failed
    assert "CrashLoopBackOff" in seen  # the later restarts back off


def test_liveness_probe_failure_restarts_the_container(cluster: Cluster) -> None:
    k = cluster
    probe = {"tcpSocket": {"port": 9}, "periodSeconds": 1, "failureThreshold": 2}
    k.create_pod(
        "unlive",
        containers=[container("main", "import time; time.sleep(3600)", livenessProbe=probe)],
        terminationGracePeriodSeconds=5,
    )

    def restarted() -> client.V1Pod | None:
        pod = k.pod("unlive")
        statuses = (pod.status.container_statuses or []) if pod else []
        return pod if statuses and statuses[0].restart_count >= 1 else None

    pod = k.wait(restarted, "a restart after liveness failures")
    last = pod.status.container_statuses[0].last_state.terminated
    assert last.exit_code == 128 + 15  # stopped by SIGTERM
    selector = "involvedObject.name=unlive"
    events = k.core.list_namespaced_event(k.namespace, field_selector=selector)
    assert {"Unhealthy", "Killing", "Started"} <= {e.reason for e in events.items}


COUNTER = """
    import os, pathlib
    counter = pathlib.Path(os.environ["SEGUE_POD_ROOT"], "state", "counter")
    value = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(value))
    print(value, flush=True)
"""


def test_a_claim_outlives_its_pod_and_is_found_by_the_next(cluster: Cluster) -> None:
    k = cluster
    k.core.create_namespaced_persistent_volume_claim(k.namespace, claim("kept"))
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            container("main", COUNTER, volumeMounts=[{"name": "state", "mountPath": "/state"}])
        ],
        "volumes": [{"name": "state", "persistentVolumeClaim": {"claimName": "kept"}}],
    }
    for expected in ("1", "2"):
        k.create_pod("stateful", **spec)
        done = k.wait_phase("stateful", "Succeeded", "Failed")
        assert k.log(done, "main").strip() == expected
        k.core.delete_namespaced_pod("stateful", k.namespace)
        k.wait_gone("stateful")
        directory = k.runner.claim_dir(k.namespace, "kept")
        assert directory is not None
        assert (directory / "counter").read_text() == expected

    def bound() -> client.V1PersistentVolumeClaim | None:
        found = k.core.read_namespaced_persistent_volume_claim("kept", k.namespace)
        return found if found.status.phase == "Bound" else None

    provisioned = k.wait(bound, "the claim to be bound by the runner's provisioner")
    assert provisioned.spec.volume_name == f"segue-{provisioned.metadata.uid}"
    assert directory is not None
    k.core.delete_namespaced_persistent_volume_claim("kept", k.namespace)
    k.wait(lambda: not directory.exists(), "the claim's directory to be removed")


MAIN = """
    import json, os, pathlib, sys, time
    root = pathlib.Path(os.environ["SEGUE_POD_ROOT"])
    shared = root / "shared"
    while not (shared / "sidecar-ip").exists():
        time.sleep(0.05)
    files = lambda d: {p.name: p.read_text() for p in sorted((root / d).iterdir()) if p.is_file()}
    print(json.dumps({
        "argv": sys.argv[1:],
        "env": {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_PORT_")},
        "cwd": os.getcwd(),
        "init": (shared / "init").read_text(),
        "sidecar_ip": (shared / "sidecar-ip").read_text(),
        "config": files("etc/config"),
        "podinfo": files("etc/podinfo"),
    }), flush=True)
"""
WRITE_INIT = """
    import os, pathlib
    pathlib.Path(os.environ["SEGUE_POD_ROOT"], "shared", "init").write_text("done")
"""
WRITE_IP = """
    import os, pathlib
    shared = pathlib.Path(os.environ["SEGUE_POD_ROOT"], "shared")
    (shared / "sidecar-ip.tmp").write_text(os.environ["POD_IP"])
    (shared / "sidecar-ip.tmp").rename(shared / "sidecar-ip")  # the main container polls for it
"""


def test_env_volumes_init_containers_and_shared_pod_ip(cluster: Cluster) -> None:
    k = cluster
    settings = {"metadata": {"name": "settings"}, "data": {"greeting": "hello", "mode": "fast"}}
    k.core.create_namespaced_config_map(k.namespace, client.V1ConfigMap.from_dict(settings))
    secret = {"metadata": {"name": "creds"}, "stringData": {"password": "s3cret"}}
    k.core.create_namespaced_secret(k.namespace, client.V1Secret.from_dict(secret))
    shared = {"name": "shared", "mountPath": "/shared"}
    greeting = {"configMapKeyRef": {"name": "settings", "key": "greeting"}}
    env = [
        *pod_ip_env(),
        {"name": "GREETING", "valueFrom": greeting},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "MESSAGE", "value": "$(GREETING) from $(APP), $$(NOT_EXPANDED)"},
    ]
    downward = [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
    ]
    main_mounts = [
        shared,
        {"name": "config", "mountPath": "/etc/config"},
        {"name": "podinfo", "mountPath": "/etc/podinfo"},
    ]
    k.create_pod(
        "full",
        labels={"app": "demo"},
        restartPolicy="Never",
        initContainers=[container("init", WRITE_INIT, volumeMounts=[shared])],
        containers=[
            container(
                "main",
                MAIN,
                "$(GREETING)",
                "$$(GREETING)",
                env=env,
                envFrom=[{"prefix": "CFG_", "configMapRef": {"name": "settings"}}],
                workingDir="/work/dir",
                volumeMounts=main_mounts,
            ),
            container("sidecar", WRITE_IP, env=pod_ip_env(), volumeMounts=[shared]),
        ],
        volumes=[
            {"name": "shared", "emptyDir": {}},
            {
                "name": "config",
                "configMap": {"name": "settings", "items": [{"key": "mode", "path": "mode.txt"}]},
            },
            {"name": "podinfo", "downwardAPI": {"items": downward}},
        ],
    )
    done = k.wait_phase("full", "Succeeded", "Failed")
    output = k.log(done, "main")
    assert done.status.phase == "Succeeded", k.describe()
    result = json.loads(output.strip().splitlines()[-1])
    env_seen = result["env"]
    assert result["argv"] == ["hello", "$(GREETING)"]
    assert env_seen["MESSAGE"] == "hello from demo, $(NOT_EXPANDED)"
    assert env_seen["PASSWORD"] == "s3cret"
    assert env_seen["NODE"] == "segue-local"
    assert env_seen["CFG_mode"] == "fast"
    assert env_seen["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert env_seen["POD_IP"] == done.status.pod_ip == result["sidecar_ip"]
    assert "KUBECONFIG" not in env_seen
    root = env_seen["SEGUE_POD_ROOT"]
    assert result["cwd"] == str(Path(root, "work", "dir"))
    assert result["init"] == "done"
    assert result["config"] == {"mode.txt": "fast"}
    assert result["podinfo"] == {"labels": 'app="demo"', "name": "full"}
    init_status = done.status.init_container_statuses[0]
    assert init_status.state.terminated.exit_code == 0
    assert condition(done, "Initialized") == "True"
    assert condition(done, "Ready") == "False"  # Succeeded: PodCompleted


def test_the_runner_survives_a_dropped_watch(cluster: Cluster) -> None:
    k = cluster
    assert k.runner.ctx is not None
    k.runner.ctx.api.abort()  # every watch connection drops, as if the network failed
    k.create_pod("after-drop", restartPolicy="Never", containers=[container("main", "print(1)")])
    done = k.wait_phase("after-drop", "Succeeded", "Failed")
    assert done.status.phase == "Succeeded"
    assert k.log(done, "main").strip() == "1"


def test_statefulset_pod_recreated_finds_its_claim(
    cluster: Cluster, kube_api: client.ApiClient
) -> None:
    k = cluster
    apps = client.AppsV1Api(kube_api)
    script = textwrap.dedent(COUNTER) + "import time\ntime.sleep(3600)\n"
    template = {
        "metadata": {"labels": {"app": "counter"}},
        "spec": {
            "terminationGracePeriodSeconds": 2,
            "containers": [
                container("main", script, volumeMounts=[{"name": "state", "mountPath": "/state"}])
            ],
        },
    }
    claim_template = claim("state").to_dict()
    sts = {
        "metadata": {"name": "counter"},
        "spec": {
            "replicas": 2,
            "serviceName": "counter",
            "selector": {"matchLabels": {"app": "counter"}},
            "template": template,
            "volumeClaimTemplates": [
                {"metadata": {"name": "state"}, "spec": claim_template["spec"]}
            ],
        },
    }
    apps.create_namespaced_stateful_set(k.namespace, client.V1StatefulSet.from_dict(sts))

    def ready() -> bool:
        found = apps.read_namespaced_stateful_set("counter", k.namespace)
        return found.status.ready_replicas == 2

    k.wait(ready, "two ready replicas")
    first = k.pod("counter-0")
    assert first is not None
    # Ready means running (no readiness probe), not that it has printed yet.
    assert k.wait(lambda: k.log(first, "main").strip(), "counter-0's output") == "1"
    k.core.delete_namespaced_pod("counter-0", k.namespace)

    def recreated() -> client.V1Pod | None:
        pod = k.pod("counter-0")
        if pod is None or pod.metadata.uid == first.metadata.uid:
            return None
        return pod if k.log(pod, "main").strip() else None

    again = k.wait(recreated, "counter-0 to come back")
    assert k.log(again, "main").strip() == "2"  # same claim, same directory, state found


SIDECAR = """
    import os, pathlib, time
    pathlib.Path(os.environ["SEGUE_POD_ROOT"], "shared", "sidecar-up").write_text("1")
    time.sleep(3600)
"""
HOOKED = """
    import os, pathlib, time
    shared = pathlib.Path(os.environ["SEGUE_POD_ROOT"], "shared")
    print("sidecar up before main:", (shared / "sidecar-up").exists(), flush=True)
    time.sleep(3600)
"""


def test_native_sidecar_startup_probe_and_post_start_hook(cluster: Cluster) -> None:
    k = cluster
    shared = [{"name": "shared", "mountPath": "/shared"}]
    started_file = {"exec": {"command": ["test", "-f", "shared/sidecar-up"]}, "periodSeconds": 1}
    hook = 'sleep 1; echo done > "$SEGUE_POD_ROOT/shared/hooked"'
    hooked = {"exec": {"command": ["test", "-f", "shared/hooked"]}, "periodSeconds": 1}
    k.create_pod(
        "sidecars",
        terminationGracePeriodSeconds=5,
        initContainers=[
            container(
                "sidecar",
                SIDECAR,
                restartPolicy="Always",
                startupProbe=started_file,
                volumeMounts=shared,
            )
        ],
        containers=[
            container(
                "main",
                HOOKED,
                lifecycle={"postStart": {"exec": {"command": ["sh", "-c", hook]}}},
                readinessProbe=hooked,
                volumeMounts=shared,
            )
        ],
        volumes=[{"name": "shared", "emptyDir": {}}],
    )
    ready = k.wait(
        lambda: (p := k.pod("sidecars")) and condition(p, "Ready") == "True" and p, "Ready"
    )
    output = k.wait(lambda: k.log(ready, "main").strip(), "the main container's output")
    assert output == "sidecar up before main: True"
    sidecar = ready.status.init_container_statuses[0]
    assert sidecar.started is True
    assert sidecar.ready is True
    assert sidecar.state.running is not None
    assert condition(ready, "Initialized") == "True"
    k.core.delete_namespaced_pod("sidecars", k.namespace)
    k.wait_gone("sidecars")
