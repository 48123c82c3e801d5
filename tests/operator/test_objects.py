"""The Kubernetes objects the operator builds for a StreamApp (pure: dicts in, dicts out)."""

from __future__ import annotations

from typing import Any

from segue.operator.act import access, objects
from segue.operator.act.status_patch import build_status, memory_from_status, status_patch
from segue.operator.api import StreamAppSpec, StreamAppStatus
from segue.operator.scaling import Assessment, Condition, Handover, Held, Memory, Plan, Progress


def spec(**extra: Any) -> StreamAppSpec:
    return StreamAppSpec.model_validate(
        {
            "applicationId": "wc",
            "kafka": {"bootstrapServers": "kafka:9092", "credentialsSecret": {"name": "creds"}},
            "template": {
                "image": "segue:dev",
                "command": ["segue", "worker"],
                "env": [{"name": "EXTRA", "value": "1"}],
            },
            **extra,
        }
    )


def env_of(pod: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}


def test_a_pod_carries_identity_kafka_and_credentials_by_reference() -> None:
    pod = objects.pod("wc", "uid-1", "wc-3", spec(), ["sasl.password", "security.protocol"])
    assert pod["metadata"]["name"] == "wc-3"
    assert pod["metadata"]["labels"]["segue.dev/member"] == "wc-3"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    env = env_of(pod)
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["SEGUE_STREAMAPP"]["value"] == "wc"
    assert env["SEGUE_BOOTSTRAP_SERVERS"]["value"] == "kafka:9092"
    assert env["EXTRA"]["value"] == "1"
    secret = env["SEGUE_KAFKA_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert secret == {"name": "creds", "key": "sasl.password"}  # never the value itself
    container = pod["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 9400}
    assert pod["spec"]["serviceAccountName"] == "wc-worker"
    assert pod["spec"]["volumes"] == [
        {"name": "state", "emptyDir": {}},
        {"name": "tmp", "emptyDir": {}},
    ]


def test_the_probes_period_is_the_apps_and_liveness_keeps_its_tolerance() -> None:
    from segue.operator.act import agent
    from segue.protocol.probes import LIVENESS_TOLERANCE_SECONDS, PERIOD_SECONDS

    def probes(pod: dict[str, Any]) -> dict[str, tuple[int, int]]:
        container = pod["spec"]["containers"][0]
        return {
            kind: (container[kind]["periodSeconds"], container[kind]["failureThreshold"])
            for kind in ("readinessProbe", "livenessProbe")
        }

    default = probes(objects.pod("wc", "u", "wc-0", spec()))
    assert default == {
        "readinessProbe": (PERIOD_SECONDS, 3),
        "livenessProbe": (PERIOD_SECONDS, LIVENESS_TOLERANCE_SECONDS // PERIOD_SECONDS),
    }
    every_3s = spec(probes={"periodSeconds": 3})
    assert probes(objects.pod("wc", "u", "wc-0", every_3s)) == {
        "readinessProbe": (3, 3),
        "livenessProbe": (3, 14),  # 42 s: never less than the tolerance
    }
    assert objects.template_hash(every_3s) != objects.template_hash(spec())  # it rolls
    streams = spec(runtime="kafka-streams", probes={"periodSeconds": 1})
    built = objects.pod("wc", "u", "wc-0", streams)
    injected = agent.with_agent(built, image="s:1", jar="/a.jar", metrics_port=9400, security={})
    assert probes(injected) == {"readinessProbe": (1, 3), "livenessProbe": (1, 6)}


def test_a_pod_runs_hardened_by_default() -> None:
    pod = objects.pod("wc", "u", "wc-0", spec())
    assert pod["spec"]["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    container = pod["spec"]["containers"][0]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    # With a read-only root, the worker writes only to its state volume and to /tmp.
    assert container["volumeMounts"] == [
        {"name": "state", "mountPath": "/var/lib/segue/state"},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    assert env_of(pod)["TMPDIR"] == {"name": "TMPDIR", "value": "/tmp"}
    # Each pod gets its own copy: editing one cannot change the defaults.
    container["securityContext"]["capabilities"]["drop"].append("x")
    fresh = objects.pod("wc", "u", "wc-1", spec())["spec"]["containers"][0]
    assert fresh["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_the_template_replaces_the_security_defaults() -> None:
    s = spec(
        template={
            "image": "segue:dev",
            "securityContext": {"runAsUser": 0, "readOnlyRootFilesystem": False},
            "podSecurityContext": {},
            "env": [{"name": "TMPDIR", "value": "/scratch"}],
        }
    )
    pod = objects.pod("wc", "u", "wc-0", s)
    assert pod["spec"]["securityContext"] == {}  # replaced, not merged
    container = pod["spec"]["containers"][0]
    assert container["securityContext"] == {"runAsUser": 0, "readOnlyRootFilesystem": False}
    tmpdirs = [e for e in container["env"] if e["name"] == "TMPDIR"]
    assert tmpdirs == [{"name": "TMPDIR", "value": "/scratch"}]  # the template's, once


def test_state_in_tmp_needs_no_second_volume() -> None:
    pod = objects.pod("wc", "u", "wc-0", spec(stateDir="/tmp"))
    assert pod["spec"]["volumes"] == [{"name": "state", "emptyDir": {}}]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"name": "state", "mountPath": "/tmp"}]


def test_a_volume_claim_per_pod_when_asked() -> None:
    s = spec(state={"volumeClaim": {"size": "5Gi", "storageClassName": "fast"}})
    pod = objects.pod("wc", "u", "wc-0", s)
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "state-wc-0"}
    claim = objects.state_claim("wc", "u", "wc-0", s)
    assert claim is not None
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert claim["spec"]["storageClassName"] == "fast"
    assert objects.state_claim("wc", "u", "wc-0", spec()) is None


def test_workers_may_only_read_their_own_assignment() -> None:
    role = access.role("wc", "u")
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["wc-assignment"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    binding = access.role_binding("wc", "u", "ns")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "wc-worker", "namespace": "ns"}
    ]


def test_a_kafka_streams_app_may_also_update_its_own_group_report_and_nothing_else() -> None:
    rules = access.role("wc", "u", "kafka-streams")["rules"]
    assert rules[1:] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["wc-group"],
            "verbs": ["get", "patch"],
        }
    ]
    assert rules[0] == access.role("wc", "u")["rules"][0]
    group = access.group("wc", "u")
    assert group["metadata"]["name"] == "wc-group"
    assert group["metadata"]["ownerReferences"][0]["uid"] == "u"
    assert "data" not in group  # created empty; the plugin's report is never overwritten


def plan(memory: Memory, conditions: tuple[Condition, ...]) -> Plan:
    status = Assessment("Running", 1, 1, 3, 0, (), conditions)
    return Plan(None, None, (), (), (), memory, status, (), (), 0, 0, False, None)


def test_status_drops_forgotten_keys_and_keeps_transition_times() -> None:
    previous = {
        "conditions": [
            {
                "type": "Balanced",
                "status": "True",
                "reason": "Balanced",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            },
        ],
        "scaling": {"joining": {"wc-2": "2026-01-01T00:00:00Z"}, "handovers": {}},
    }
    memory = Memory(leaving={"wc-1": 1_800_000_000.5}, handovers={"0_1": Handover("wc-0", 5.0)})
    conditions = (Condition("Balanced", "True", "Balanced", ""),)
    status = build_status(
        plan(memory, conditions), "wc", StreamAppStatus.model_validate(previous), 4, 1.9e9
    )
    patch = status_patch(status, previous)
    scaling = patch["status"]["scaling"]
    assert scaling["joining"] == {"wc-2": None}  # merge patch: removed
    assert patch["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert patch["status"]["selector"] == "segue.dev/app=wc"
    back = memory_from_status(status)
    assert back.leaving == {"wc-1": 1_800_000_000.5}
    assert back.handovers == {"0_1": Handover("wc-0", 5.0)}


def test_the_held_target_round_trips_through_the_status() -> None:
    held = Held(
        moves={"1_3": "wc-2"},
        basis={"members": "ab12", "tasks": "cd34", "capacity": "ef56", "spec": "0789"},
        progress={"1_3": Progress("wc-2", 420, 1_800_000_000.5, 9_000, 1_799_999_990.25)},
        standbys={"1_3": ("wc-0",), "1_4": ("wc-1", "wc-2")},
    )
    status = build_status(plan(Memory(held=held), ()), "wc", None, 1, 1.9e9)
    assert memory_from_status(status).held == held
    wire = status_patch(status, None)["status"]["scaling"]["held"]
    assert wire["progress"]["1_3"] == {
        "member": "wc-2",
        "lag": 420,
        "since": "2027-01-15T08:00:00.500000Z",
        "startLag": 9000,
        "startedAt": "2027-01-15T07:59:50.250000Z",
    }
    settled = build_status(plan(Memory(), ()), "wc", status, 1, 1.9e9)
    assert (
        status_patch(settled, status.model_dump(mode="json", exclude_none=True))["status"][
            "scaling"
        ]["held"]
        is None
    )  # merge patch: gone once settled


def test_status_times_are_rfc3339_utc_and_last_scale_time_is_written() -> None:
    memory = Memory(joining={"wc-2": 1_800_000_000.25}, last_scale=1_800_000_000.25)
    status = build_status(plan(memory, ()), "wc", None, 1, 1.9e9)
    assert status.last_scale_time == "2027-01-15T08:00:00.250000Z"
    assert status.scaling is not None
    assert status.scaling.joining == {"wc-2": "2027-01-15T08:00:00.250000Z"}
    assert memory_from_status(status).last_scale == 1_800_000_000.25
    assert "lastScaleTime" in status_patch(status, None)["status"]


def test_a_merge_patch_nulls_what_is_gone_at_every_level() -> None:
    from segue.operator.act.status_patch import merge_patch

    old = {"a": 1, "b": {"c": 1, "d": 2}, "e": [1, 2]}
    assert merge_patch(old, {"b": {"c": 3}, "e": [2]}) == {
        "a": None,
        "b": {"c": 3, "d": None},
        "e": [2],
    }


def test_a_settled_step_that_decides_the_status_it_read_sends_no_patch() -> None:
    from segue.operator.act.status_patch import changes

    conditions = (Condition("Balanced", "True", "Balanced", ""),)
    first = build_status(plan(Memory(joining={"wc-2": 1.8e9}), conditions), "wc", None, 4, 1.9e9)
    wire = first.model_dump(mode="json", exclude_none=True)  # as the API server keeps it
    again = build_status(plan(Memory(joining={"wc-2": 1.8e9}), conditions), "wc", first, 4, 2e9)
    assert not changes({"status": wire}, status_patch(again, wire))
    later = build_status(plan(Memory(), conditions), "wc", first, 4, 2e9)  # wc-2 joined
    assert changes({"status": wire}, status_patch(later, wire))
    assert changes({"status": wire}, {"status": {"observedGeneration": 5}})
    assert not changes({"a": {"b": 1}}, {"a": {"b": 1, "c": None}})  # nulling what is absent
    assert changes({"a": {"b": 1}}, {"a": {"b": None}})


def test_a_kafka_streams_pod_gets_the_agent_and_keeps_the_users_java_options() -> None:
    from segue.operator.act import agent

    template = {
        "image": "my-app:1",
        "command": ["java", "-jar", "app.jar"],
        "env": [{"name": "JAVA_TOOL_OPTIONS", "value": "-Xmx1g"}],
    }
    the_spec = spec(runtime="kafka-streams", template=template)
    built = objects.pod("wc", "uid-1", "wc-0", the_spec)
    pod = agent.with_agent(
        built, image="segue:1", jar="/opt/segue/a.jar", metrics_port=9400, security={}
    )
    assert built["spec"].get("initContainers") is None  # a new dict: the input is kept
    init = pod["spec"]["initContainers"][0]
    assert init["image"] == "segue:1"
    assert init["command"] == [
        "cp",
        "/opt/segue/a.jar",
        "$(SEGUE_POD_ROOT)/segue/agent/segue-kstreams.jar",
    ]
    container = pod["spec"]["containers"][0]
    names = [e["name"] for e in container["env"]]
    assert names[0] == "SEGUE_POD_ROOT"  # defined before anything expands it
    env = env_of(pod)
    assert env["SEGUE_POD_ROOT"]["value"] == ""
    assert env["JAVA_TOOL_OPTIONS"]["value"] == (
        "-javaagent:$(SEGUE_POD_ROOT)/segue/agent/segue-kstreams.jar -Xmx1g"
    )
    assert env["SEGUE_STATE_DIR"]["value"].startswith("$(SEGUE_POD_ROOT)/")
    assert {"name": "segue-agent", "emptyDir": {}} in pod["spec"]["volumes"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": 9400}
    # the runtime is part of what rolls the pods; Segue's own apps keep their hash
    assert objects.template_hash(the_spec) != objects.template_hash(spec())
