"""The pod runner's pure rules: $(VAR) expansion, the environment a container
gets, path mapping, and the pod status a kubelet would report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from segue.stack.kubelet import podspec, status
from segue.stack.kubelet.container import Container
from segue.stack.kubelet.ipam import LoopbackIpam
from segue.stack.kubelet.token import Token
from segue.stack.kubelet.volumes import MountError, PodVolumes

Obj = dict[str, Any]

# --- $(VAR) expansion: the cases of k8s third_party/forked/golang/expansion ---

VARS = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(VAR_A)", "A"),
        ("___$(VAR_B)___", "___B___"),
        ("$(VAR_A)-$(VAR_A)", "A-A"),
        ("$(VAR_A)-1", "A-1"),
        ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
        ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
        ("$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
        ("f000-$$VAR_A", "f000-$VAR_A"),
        ("foo\\$(VAR_C)bar", "foo\\Cbar"),
        ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
        ("$(VAR_REF)", "$(VAR_A)"),  # no recursion
        ("foo$(VAR_EMPTY)bar", "foobar"),
        ("$(VAR_DNE)", "$(VAR_DNE)"),  # undefined: kept
        ("$(VAR_A", "$(VAR_A"),  # unclosed: kept
        ("$()", "$()"),
        ("$", "$"),
        ("$$", "$"),
        ("$$$$", "$$"),
        ("$VAR_A", "$VAR_A"),
        ("foo$", "foo$"),
        ("$(VAR_A)$", "A$"),
        ("$($(VAR_A))", "$($(VAR_A))"),
        ("$$$(VAR_A)", "$A"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert podspec.expand(text, VARS.get) == expected


# --- the container's environment ---


def pod(**spec: Any) -> Obj:
    return {
        "metadata": {
            "name": "web-0",
            "namespace": "apps",
            "uid": "u-1",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"note": 'say "hi"'},
        },
        "spec": {"nodeName": "segue-local", "serviceAccountName": "runner", **spec},
    }


CONFIG = {"settings": {"greeting": b"hello", "mode": b"fast", "bad=key": b"x"}}
SECRETS = {"creds": {"password": b"s3cret"}}
SERVICE = podspec.service_env("127.0.0.1", 6443)


def env_of(
    container: Obj, the_pod: Obj | None = None, pod_root: str | None = None
) -> dict[str, str]:
    return podspec.container_env(
        the_pod or pod(containers=[container]),
        container,
        config_maps=CONFIG.get,
        secrets=SECRETS.get,
        service=SERVICE,
        pod_ip="127.0.9.9",
        host_ip="127.0.0.1",
        allocatable={"cpu": "2", "memory": "4Gi"},
        pod_root=pod_root,
    )


def test_env_values_refs_and_order() -> None:
    container = {
        "name": "c",
        "envFrom": [
            {"configMapRef": {"name": "settings"}, "prefix": "CFG_"},
            {"secretRef": {"name": "creds"}},
        ],
        "env": [
            {
                "name": "GREETING",
                "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "greeting"}},
            },
            {"name": "MESSAGE", "value": "$(GREETING), $(password), $(LATER) $$(GREETING)"},
            {"name": "LATER", "value": "later"},
            {"name": "HOST", "value": "$(KUBERNETES_SERVICE_HOST)"},
            {"name": "CFG_mode", "value": "overridden"},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {
                "name": "NOTE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}},
            },
            {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
            {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
        ],
    }
    env = env_of(container)
    assert env["CFG_greeting"] == "hello"
    assert "CFG_bad=key" not in env  # not a valid variable name: skipped
    assert env["password"] == "s3cret"
    # Earlier variables and the service variables expand; later ones do not.
    assert env["MESSAGE"] == "hello, s3cret, $(LATER) $(GREETING)"
    assert env["HOST"] == "127.0.0.1"
    assert env["CFG_mode"] == "overridden"
    assert env["IP"] == "127.0.9.9"
    assert env["APP"] == "web"
    assert env["NOTE"] == 'say "hi"'
    assert env["SA"] == "runner"
    assert env["KUBERNETES_SERVICE_PORT"] == "443"  # the pod's own value wins
    assert env["KUBERNETES_PORT_6443_TCP_ADDR"] == "127.0.0.1"


def test_env_missing_references() -> None:
    missing_map = {
        "name": "c",
        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k"}}}],
    }
    with pytest.raises(podspec.ContainerConfigError, match='configmap "nope" not found'):
        env_of(missing_map)
    missing_key = {
        "name": "c",
        "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}}],
    }
    with pytest.raises(
        podspec.ContainerConfigError, match="couldn't find key k in Secret apps/creds"
    ):
        env_of(missing_key)
    optional = {
        "name": "c",
        "env": [
            {
                "name": "X",
                "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k", "optional": True}},
            }
        ],
        "envFrom": [{"configMapRef": {"name": "nope", "optional": True}}],
    }
    assert "X" not in env_of(optional)


def test_resource_field_ref_defaults_to_node_allocatable() -> None:
    container = {
        "name": "c",
        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "250m"}},
        "env": [
            {
                "name": "MEM",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
            },
            {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {
                "name": "CPU_REQ",
                "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}},
            },
        ],
    }
    env = env_of(container)
    assert env == {**SERVICE, "MEM": "512", "CPU_LIMIT": "2", "CPU_REQ": "250"}


def test_process_env_is_an_allow_list_plus_the_pod() -> None:
    base = {
        "PATH": "/bin",
        "KUBECONFIG": "/admin",
        "HOME": "/root",
        "VIRTUAL_ENV": "/venv",
        "SECRET": "x",
    }
    env = podspec.process_env(
        base,
        {"A": "1", "SEGUE_POD_ROOT": "/fake", "HOME": "/custom"},
        pod_root=Path("/pods/root"),
        home=Path("/pods/home"),
        hostname="web-0",
    )
    assert env == {
        "PATH": "/bin",
        "VIRTUAL_ENV": "/venv",
        "HOME": "/custom",
        "HOSTNAME": "web-0",
        "A": "1",
        "SEGUE_POD_ROOT": "/pods/root",
    }


def test_argv_expansion_and_missing_command() -> None:
    container = {"name": "c", "command": ["run", "$(A)"], "args": ["--x=$(B)", "$$(A)", "$(NOPE)"]}
    assert podspec.container_argv(container, {"A": "1", "B": "2"}) == [
        "run",
        "1",
        "--x=2",
        "$(A)",
        "$(NOPE)",
    ]
    with pytest.raises(podspec.ContainerConfigError, match="has no command") as caught:
        podspec.container_argv({"name": "c", "args": ["x"]}, {})
    assert caught.value.reason == "CreateContainerError"


def test_paths_stay_inside_the_root() -> None:
    root = Path("/r")
    assert podspec.inner_path(root, "/var/run/x") == Path("/r/var/run/x")
    assert podspec.inner_path(root, "data/../etc") == Path("/r/etc")
    assert podspec.inner_path(root, "/../../etc") == Path("/r/etc")  # "/.." is "/"
    assert podspec.inner_path(root, "/") == root
    assert podspec.inner_path(root, "../etc") == Path("/r/etc")
    assert podspec.sub_path({"subPathExpr": "logs/$(POD)"}, {"POD": "web-0"}) == "logs/web-0"
    with pytest.raises(podspec.ContainerConfigError):
        podspec.sub_path({"name": "v", "subPath": "../x"}, {})


def test_downward_api_formats() -> None:
    the_pod = pod()
    assert podspec.field_value(the_pod, "metadata.labels", "", "") == 'app="web"\ntier="front"'
    assert podspec.field_value(the_pod, "metadata.annotations", "", "") == 'note="say \\"hi\\""'
    assert podspec.field_value(the_pod, "metadata.labels['missing']", "", "") == ""
    with pytest.raises(podspec.ContainerConfigError):
        podspec.field_value(the_pod, "spec.bogus", "", "")


def test_grace_period() -> None:
    assert podspec.grace_seconds(pod()) == 30
    assert podspec.grace_seconds(pod(terminationGracePeriodSeconds=5)) == 5
    deleting = pod(terminationGracePeriodSeconds=5)
    deleting["metadata"]["deletionGracePeriodSeconds"] = 1
    assert podspec.grace_seconds(deleting) == 1


# --- status ---

T0, T1 = "2030-01-01T00:00:00Z", "2030-01-01T00:01:00Z"


def cs(
    name: str, state: Obj, *, ready: bool = False, last: Obj | None = None, started: bool = False
) -> Obj:
    return status.container_status(
        {"name": name}, state, last_state=last, ready=ready, started=started
    )


def spec(
    policy: str = "Always", init: list[Obj] | None = None, names: tuple[str, ...] = ("a",)
) -> Obj:
    return {
        "restartPolicy": policy,
        "initContainers": init or [],
        "containers": [{"name": n} for n in names],
    }


RUNNING = status.running(T0)
WAITING = status.waiting("ContainerCreating")
OK = status.terminated(0, T0, T1)
FAILED = status.terminated(1, T0, T1)


@pytest.mark.parametrize(
    ("the_spec", "init", "regular", "terminal", "phase"),
    [
        (spec(), [], [cs("a", WAITING)], False, "Pending"),
        (spec(), [], [cs("a", RUNNING)], False, "Running"),
        (spec(), [], [], False, "Pending"),  # unknown
        (spec("Always"), [], [cs("a", OK)], False, "Running"),  # about to restart
        (spec("Always"), [], [cs("a", OK)], True, "Succeeded"),  # deleted, all exited 0
        (spec("Always"), [], [cs("a", FAILED)], True, "Failed"),
        (spec("OnFailure"), [], [cs("a", OK)], False, "Succeeded"),
        (spec("OnFailure"), [], [cs("a", FAILED)], False, "Running"),  # will restart
        (spec("Never"), [], [cs("a", FAILED)], False, "Failed"),
        (spec("Never", names=("a", "b")), [], [cs("a", OK), cs("b", RUNNING)], False, "Running"),
        (
            spec("Always"),
            [],
            [cs("a", status.waiting("CrashLoopBackOff"), last=FAILED)],
            False,
            "Running",
        ),
        (spec(init=[{"name": "i"}]), [cs("i", RUNNING)], [cs("a", WAITING)], False, "Pending"),
        (spec(init=[{"name": "i"}]), [cs("i", OK)], [cs("a", RUNNING)], False, "Running"),
        (
            spec("Never", init=[{"name": "i"}]),
            [cs("i", FAILED)],
            [cs("a", WAITING)],
            False,
            "Failed",
        ),
        (
            spec("OnFailure", init=[{"name": "i"}]),
            [cs("i", status.waiting("CrashLoopBackOff"), last=FAILED)],
            [cs("a", WAITING)],
            False,
            "Pending",
        ),
        # a native sidecar: pending until started; afterwards it does not hold the pod
        (
            spec(init=[{"name": "s", "restartPolicy": "Always"}]),
            [cs("s", RUNNING)],
            [cs("a", WAITING)],
            False,
            "Pending",
        ),
        (
            spec("Never", init=[{"name": "s", "restartPolicy": "Always"}]),
            [cs("s", OK)],
            [cs("a", OK)],
            False,
            "Succeeded",
        ),
    ],
)
def test_pod_phase(
    the_spec: Obj, init: list[Obj], regular: list[Obj], terminal: bool, phase: str
) -> None:
    assert status.pod_phase(the_spec, init, regular, terminal=terminal) == phase


def conditions_of(
    the_pod: Obj, phase: str, regular: list[Obj], previous: list[Obj] | None = None, now: str = T1
) -> dict[str, Obj]:
    result = status.conditions(
        the_pod, phase, [], regular, sandbox_ready=True, previous=previous or [], now=now
    )
    return {c["type"]: c for c in result}


def test_ready_conditions_and_readiness_gates() -> None:
    the_pod = pod(containers=[{"name": "a"}, {"name": "b"}])
    the_pod["status"] = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    got = conditions_of(the_pod, "Running", [cs("a", RUNNING, ready=True), cs("b", RUNNING)])
    assert got["Ready"]["status"] == "False"
    assert got["Ready"]["message"] == "containers with unready status: [b]"
    assert got["ContainersReady"]["reason"] == "ContainersNotReady"
    assert got["Initialized"]["status"] == "True"
    assert got["PodScheduled"] == {"type": "PodScheduled", "status": "True"}  # kept as it was

    gated = pod(containers=[{"name": "a"}], readinessGates=[{"conditionType": "example.com/lb"}])
    got = conditions_of(gated, "Running", [cs("a", RUNNING, ready=True)])
    assert got["ContainersReady"]["status"] == "True"
    assert got["Ready"]["reason"] == "ReadinessGatesNotReady"
    gated["status"] = {"conditions": [{"type": "example.com/lb", "status": "True"}]}
    assert (
        conditions_of(gated, "Running", [cs("a", RUNNING, ready=True)])["Ready"]["status"] == "True"
    )

    done = conditions_of(pod(containers=[{"name": "a"}]), "Succeeded", [cs("a", OK)])
    assert done["Ready"]["reason"] == "PodCompleted"


def test_transition_times_change_only_with_the_status() -> None:
    the_pod = pod(containers=[{"name": "a"}])
    first = conditions_of(the_pod, "Running", [cs("a", RUNNING)], now=T0)
    same = conditions_of(the_pod, "Running", [cs("a", RUNNING)], list(first.values()), now=T1)
    assert same["Ready"]["lastTransitionTime"] == T0
    flipped = conditions_of(
        the_pod, "Running", [cs("a", RUNNING, ready=True)], list(first.values()), now=T1
    )
    assert flipped["Ready"]["lastTransitionTime"] == T1
    assert flipped["Initialized"]["lastTransitionTime"] == T0


def test_pod_status_shape() -> None:
    the_pod = pod(containers=[{"name": "a"}])
    got = status.pod_status(
        the_pod,
        host_ip="127.0.0.1",
        pod_ip="127.0.3.4",
        start_time=T0,
        init_statuses=[],
        statuses=[cs("a", RUNNING, ready=True, started=True)],
        sandbox_ready=True,
        terminal=False,
        previous_conditions=[],
        now=T1,
    )
    assert got["phase"] == "Running"
    assert got["podIPs"] == [{"ip": "127.0.3.4"}]
    assert got["initContainerStatuses"] is None  # merge patch: removed
    assert got["containerStatuses"][0]["state"] == {"running": {"startedAt": T0}}


def test_exit_codes_and_backoff() -> None:
    assert status.exit_code_of(-15) == 143
    assert status.exit_code_of(-9) == 137
    assert status.exit_code_of(3) == 3
    box = Container(
        {"name": "c"}, init=False, logs=Path("/nonexistent"), waiting_reason="ContainerCreating"
    )
    delays = []
    for failures in range(1, 8):
        box.failures = failures
        delays.append(box.backoff_delay(1.0, 10.0))
    assert delays == [0, 1, 2, 4, 8, 10, 10]


def test_loopback_addresses_are_unique_and_recycled_late() -> None:
    ipam = LoopbackIpam("127.0.2.1", "127.0.2.6")
    taken = {ipam.allocate() for _ in range(6)}
    assert len(taken) == 6
    assert all(ip.startswith("127.0.2.") for ip in taken)
    with pytest.raises(RuntimeError):
        ipam.allocate()
    ipam.release("127.0.2.3")
    assert ipam.allocate() == "127.0.2.3"


# --- volumes on disk (no API: lookups are plain dicts) ---


def volumes_for(the_pod: Obj, base: Path, claims: Mapping[str, Path]) -> PodVolumes:
    def claim_dir(name: str) -> Path:
        if name not in claims:
            raise MountError(f'persistentvolumeclaim "{name}" not found')
        return claims[name]

    return PodVolumes(
        the_pod,
        base,
        config_maps=CONFIG.get,
        secrets=SECRETS.get,
        claim_dir=claim_dir,
        tokens=lambda audience, seconds: Token(f"token-for-{audience}-{seconds}", refresh_at=1e18),
        pod_ip="127.0.9.9",
        host_ip="127.0.0.1",
        allocatable={},
    )


def test_volume_files_and_mount_links(tmp_path: Path) -> None:
    the_pod = pod(
        volumes=[
            {"name": "scratch", "emptyDir": {}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {
                "name": "cfg",
                "configMap": {"name": "settings", "items": [{"key": "mode", "path": "m/mode"}]},
            },
            {"name": "sec", "secret": {"secretName": "creds", "defaultMode": 0o400}},
            {
                "name": "api",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                        {
                            "configMap": {
                                "name": "settings",
                                "items": [{"key": "greeting", "path": "ca.crt"}],
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "namespace",
                                        "fieldRef": {"fieldPath": "metadata.namespace"},
                                    }
                                ]
                            }
                        },
                    ]
                },
            },
        ]
    )
    claim = tmp_path / "claims" / "data"
    claim.mkdir(parents=True)
    volumes = volumes_for(the_pod, tmp_path / "volumes", {"data": claim})
    volumes.setup(the_pod)
    root = tmp_path / "rootfs"
    mounts = {
        "name": "c",
        "volumeMounts": [
            {"name": "scratch", "mountPath": "/tmp/scratch"},
            {"name": "data", "mountPath": "/var/lib/app", "subPath": "$(POD)"},
            {"name": "data", "mountPath": "/var/lib/other", "subPathExpr": "$(POD)"},
            {"name": "cfg", "mountPath": "/etc/cfg"},
            {"name": "sec", "mountPath": "/etc/sec"},
            {"name": "api", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
        ],
    }
    volumes.mount(root, mounts, {"POD": "web-0"})
    assert (root / "etc/cfg/m/mode").read_text() == "fast"
    assert (root / "etc/sec/password").read_text() == "s3cret"
    assert (root / "etc/sec/password").stat().st_mode & 0o777 == 0o400
    sa = root / "var/run/secrets/kubernetes.io/serviceaccount"
    assert (sa / "token").read_text() == "token-for-None-3607"
    assert (sa / "ca.crt").read_text() == "hello"
    assert (sa / "namespace").read_text() == "apps"
    (root / "var/lib/other/state").write_text("kept")  # subPathExpr: the claim's web-0/
    assert (claim / "web-0" / "state").read_text() == "kept"
    assert (root / "var/lib/app").resolve() == (claim / "$(POD)").resolve()  # subPath: literal
    (root / "tmp/scratch/x").write_text("1")
    volumes.teardown()
    assert not (tmp_path / "volumes").exists()
    assert (claim / "web-0" / "state").exists()


def test_missing_objects_fail_the_mount(tmp_path: Path) -> None:
    for volume in (
        {"name": "v", "configMap": {"name": "nope"}},
        {"name": "v", "persistentVolumeClaim": {"claimName": "nope"}},
        {"name": "v", "configMap": {"name": "settings", "items": [{"key": "nope", "path": "x"}]}},
        {"name": "v", "nfs": {"server": "x", "path": "/"}},
    ):
        the_pod = pod(volumes=[volume])
        with pytest.raises(MountError):
            volumes_for(the_pod, tmp_path / "volumes", {}).setup(the_pod)
    optional = pod(volumes=[{"name": "v", "configMap": {"name": "nope", "optional": True}}])
    volumes_for(optional, tmp_path / "volumes", {}).setup(optional)


def test_a_path_under_segue_pod_root_is_the_mounts_host_path_here_and_absolute_elsewhere() -> None:
    container = {
        "name": "c",
        "env": [
            {"name": "SEGUE_POD_ROOT", "value": ""},
            {"name": "JAVA_TOOL_OPTIONS", "value": "-javaagent:$(SEGUE_POD_ROOT)/segue/a.jar"},
        ],
    }
    here = env_of(container, pod_root="/runner/pods/p/rootfs/c")
    assert here["JAVA_TOOL_OPTIONS"] == "-javaagent:/runner/pods/p/rootfs/c/segue/a.jar"
    # a kubelet that knows no pod root expands the empty variable: the path in the image
    assert env_of(container)["JAVA_TOOL_OPTIONS"] == "-javaagent:/segue/a.jar"
