"""What the chart renders for a matrix of values: objects, arguments, permissions, security.

Each case names the values it sets and the objects or arguments that must (or must
not) follow from them; every case also passes ``helm lint --strict``.
"""

from __future__ import annotations

from typing import Any

import pytest

from .helm import FULLNAME, NAMESPACE, container, deployment, only, render, with_values

# Verbs that change something: none of them may be granted cluster-wide in namespaced mode.
WRITES = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "*"}
RECOMMENDED = {
    "app.kubernetes.io/name": "segue",
    "app.kubernetes.io/instance": "demo",
    "app.kubernetes.io/version": "0.1.0",
    "app.kubernetes.io/managed-by": "Helm",
    "helm.sh/chart": "segue-0.1.0",
}
MATRIX: dict[str, dict[str, Any]] = {
    "defaults": {},
    "namespaced": {"watchNamespaces": ["team-a", "team-b"]},
    "json-logs": {"logFormat": "json", "logLevel": "debug"},
    "one-replica": {"replicaCount": 1},
    "service-monitor": {
        "metrics": {"serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"p": "x"}}}
    },
    "no-rbac": {"rbac": {"create": False}},
    "no-leader-election": {"leaderElection": {"enabled": False}, "replicaCount": 1},
    "no-metrics": {"metrics": {"port": 0}},
    "no-external-metrics": {"externalMetrics": {"enabled": False}},
    "hpa": {
        "externalMetrics": {"port": 7443},
        "hpa": {
            "enabled": True,
            "streamApp": "wordcount",
            "namespace": "apps",
            "maxReplicas": 6,
            "metric": "segue-lag-records",
            "target": {"type": "AverageValue", "value": "10k"},
        },
    },
    "own-service-account": {"serviceAccount": {"create": False, "name": "ops"}},
    "tuned": {
        "command": ["/opt/venv/bin/segue"],
        "extraArgs": ["--verbose"],
        "settings": {
            "busyInterval": 0.25,
            "idleInterval": 7,
            "errorBackoff": 3,
            "scrapeTimeout": 1.5,
            "kafkaTimeout": 20,
            "scrapeWorkers": 4,
        },
        "leaderElection": {"leaseDuration": 30, "renewDeadline": 20, "retryPeriod": 4},
        "metrics": {"port": 9500},
        "health": {"port": 8082},
        "image": {"repository": "ghcr.io/x/segue", "tag": "1.2.3", "pullPolicy": "Always"},
        "podLabels": {"team": "data"},
        "podAnnotations": {"note": "x"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "priorityClassName": "system-cluster-critical",
        "imagePullSecrets": [{"name": "pull"}],
    },
}


def args(objects: list[dict[str, Any]]) -> list[str]:
    return list(container(objects)["args"])


def rules_by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, list[dict[str, Any]]]:
    return {
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": o["rules"]
        for o in only(objects, kind)
    }


@pytest.mark.parametrize("case", sorted(MATRIX))
def test_every_case_lints_and_labels_every_object(case: str) -> None:
    lint = with_values("lint", MATRIX[case])
    assert lint.returncode == 0, lint.stdout + lint.stderr
    for obj in render(MATRIX[case]):
        labels = obj["metadata"]["labels"]
        assert {k: labels.get(k) for k in RECOMMENDED} == {
            **RECOMMENDED,
            "app.kubernetes.io/version": "1.2.3" if case == "tuned" else "0.1.0",
        }, (obj["kind"], obj["metadata"]["name"])


def test_defaults_render_the_operator_with_leader_election_in_cluster_mode() -> None:
    objects = render()
    assert sorted((o["kind"], o["metadata"]["name"]) for o in objects) == sorted(
        [
            ("ServiceAccount", FULLNAME),
            ("ClusterRole", FULLNAME),
            ("ClusterRoleBinding", FULLNAME),
            ("ClusterRole", f"{FULLNAME}-discovery"),
            ("ClusterRoleBinding", f"{FULLNAME}-discovery"),
            ("Role", f"{FULLNAME}-leader-election"),
            ("RoleBinding", f"{FULLNAME}-leader-election"),
            ("Service", f"{FULLNAME}-metrics"),
            ("Service", f"{FULLNAME}-external-metrics"),
            ("Secret", f"{FULLNAME}-external-metrics"),
            ("APIService", "v1beta1.external.metrics.k8s.io"),
            ("Role", f"{FULLNAME}-extension-apiserver-authentication"),
            ("RoleBinding", f"{FULLNAME}-extension-apiserver-authentication"),
            ("PodDisruptionBudget", FULLNAME),
            ("Deployment", FULLNAME),
            ("ValidatingAdmissionPolicy", f"{FULLNAME}-managed-only"),
            ("ValidatingAdmissionPolicyBinding", f"{FULLNAME}-managed-only"),
        ]
    )
    spec = deployment(objects)["spec"]
    assert spec["replicas"] == 2
    c = container(objects)
    assert c["image"] == "segue:0.1.0"
    assert c["command"] == ["segue"]
    assert args(objects) == [
        "operator",
        "--bind-address=$(POD_IP)",
        "--metrics-port=9401",
        "--health-port=8081",
        "--external-metrics-port=6443",
        "--tls-cert-file=/var/run/segue/external-metrics/tls.crt",
        "--tls-private-key-file=/var/run/segue/external-metrics/tls.key",
        "--busy-interval=0.5",
        "--idle-interval=5",
        "--error-backoff=2",
        "--scrape-timeout=2",
        "--kafka-timeout=10",
        "--scrape-workers=16",
        "--step-workers=16",
        "--routine-looks=20",
        "--log-level=info",
        "--log-format=plain",
        "--history-topic=",
        "--kstreams-agent-image=segue:0.1.0",
        "--leader-elect",
        f"--lease-name={FULLNAME}",
        "--lease-namespace=$(POD_NAMESPACE)",
        "--lease-duration=15",
        "--renew-deadline=10",
        "--retry-period=2",
        "--identity=$(POD_NAME)",
    ]
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in c["env"]}
    assert env == {
        "POD_IP": "status.podIP",
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
    }
    pdb = only(objects, "PodDisruptionBudget")[0]["spec"]
    assert pdb["minAvailable"] == 1
    assert pdb["selector"]["matchLabels"] == spec["selector"]["matchLabels"]


def test_the_operator_pod_is_locked_down_and_probed_on_its_health_port() -> None:
    objects = render()
    pod = deployment(objects)["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    c = container(objects)
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert c["volumeMounts"] == [
        {"name": "tmp", "mountPath": "/tmp"},
        {
            "name": "external-metrics-tls",
            "mountPath": "/var/run/segue/external-metrics",
            "readOnly": True,
        },
    ]
    assert pod["volumes"] == [
        {"name": "tmp", "emptyDir": {}},
        {
            "name": "external-metrics-tls",
            "secret": {"secretName": f"{FULLNAME}-external-metrics", "defaultMode": 0o440},
        },
    ]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"metrics": 9401, "health": 8081, "ext-metrics": 6443}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert c["resources"] == {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"memory": "1Gi"},
    }
    assert pod["serviceAccountName"] == FULLNAME


def test_namespaced_mode_grants_the_same_rules_per_namespace_and_no_cluster_write() -> None:
    cluster_rules = rules_by_kind(render(), "ClusterRole")[f"/{FULLNAME}"]
    objects = render(MATRIX["namespaced"])
    roles = rules_by_kind(objects, "Role")
    assert roles == {
        f"team-a/{FULLNAME}": cluster_rules,
        f"team-b/{FULLNAME}": cluster_rules,
        f"{NAMESPACE}/{FULLNAME}-leader-election": roles[f"{NAMESPACE}/{FULLNAME}-leader-election"],
        f"kube-system/{FULLNAME}-extension-apiserver-authentication": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["extension-apiserver-authentication"],
                "verbs": ["get"],
            }
        ],
    }
    bindings = {
        (b["metadata"]["namespace"], b["roleRef"]["name"]) for b in only(objects, "RoleBinding")
    }
    assert bindings == {
        ("team-a", FULLNAME),
        ("team-b", FULLNAME),
        (NAMESPACE, f"{FULLNAME}-leader-election"),
        ("kube-system", f"{FULLNAME}-extension-apiserver-authentication"),
    }
    for binding in only(objects, "RoleBinding") + only(objects, "ClusterRoleBinding"):
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}
        ]
    (discovery,) = only(objects, "ClusterRole")
    assert discovery["metadata"]["name"] == f"{FULLNAME}-discovery"
    assert discovery["rules"] == [
        {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert [b["roleRef"]["name"] for b in only(objects, "ClusterRoleBinding")] == [
        f"{FULLNAME}-discovery"
    ]
    granted = {
        verb for role in only(objects, "ClusterRole") for r in role["rules"] for verb in r["verbs"]
    }
    assert not granted & WRITES
    assert args(objects)[-2:] == ["--namespace=team-a", "--namespace=team-b"]


def test_the_operator_rules_are_the_documented_least_privilege_set() -> None:
    rules = rules_by_kind(render(), "ClusterRole")[f"/{FULLNAME}"]
    granted = {
        (group, resource): sorted(r["verbs"])
        for r in rules
        for group in r["apiGroups"]
        for resource in r["resources"]
    }
    assert granted == {
        ("segue.dev", "streamapps"): ["get", "list", "patch", "watch"],
        ("segue.dev", "streamapps/status"): ["get", "patch"],
        ("", "pods"): ["create", "delete", "get", "list", "watch"],
        ("", "persistentvolumeclaims"): ["create", "delete", "get", "list"],
        ("", "configmaps"): ["create", "get", "list", "patch", "update", "watch"],
        ("", "secrets"): ["get"],
        ("", "serviceaccounts"): ["create", "get", "patch"],
        ("rbac.authorization.k8s.io", "roles"): ["create", "get", "patch"],
        ("rbac.authorization.k8s.io", "rolebindings"): ["create", "get", "patch"],
        ("", "events"): ["create", "get", "patch"],
        ("events.k8s.io", "events"): ["create", "patch"],
    }


def test_the_lease_role_names_the_one_lease_the_operator_is_told_to_use() -> None:
    objects = render()
    (role,) = [r for r in only(objects, "Role") if r["metadata"]["name"].endswith("-election")]
    assert role["metadata"]["namespace"] == NAMESPACE
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [FULLNAME],
            "verbs": ["get", "update"],
        },
    ]
    assert f"--lease-name={FULLNAME}" in args(objects)


def test_json_logs_and_log_level_reach_the_arguments() -> None:
    rendered = args(render(MATRIX["json-logs"]))
    assert "--log-format=json" in rendered
    assert "--log-level=debug" in rendered


def test_one_replica_renders_no_disruption_budget() -> None:
    objects = render(MATRIX["one-replica"])
    assert deployment(objects)["spec"]["replicas"] == 1
    assert not only(objects, "PodDisruptionBudget")


def test_the_service_monitor_scrapes_the_metrics_service() -> None:
    objects = render(MATRIX["service-monitor"])
    (monitor,) = only(objects, "ServiceMonitor")
    (service,) = [
        s for s in only(objects, "Service") if s["metadata"]["name"] == f"{FULLNAME}-metrics"
    ]
    assert monitor["metadata"]["labels"]["p"] == "x"
    assert monitor["spec"]["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "interval": "15s", "honorLabels": True}
    ]
    selected = monitor["spec"]["selector"]["matchLabels"]
    assert selected.items() <= service["metadata"]["labels"].items()
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9401, "targetPort": "metrics", "protocol": "TCP"}
    ]
    assert service["spec"]["selector"] == deployment(objects)["spec"]["selector"]["matchLabels"]


def test_a_service_monitor_without_the_metrics_service_is_refused() -> None:
    values = {"metrics": {"service": {"enabled": False}, "serviceMonitor": {"enabled": True}}}
    result = with_values("template", values)
    assert result.returncode != 0
    assert "metrics.serviceMonitor.enabled" in result.stderr


def test_the_admission_policy_names_the_operators_own_account() -> None:
    """The policy binds to exactly the operator's ServiceAccount, and can be left out."""
    policy = only(render(), "ValidatingAdmissionPolicy")[0]
    (condition,) = policy["spec"]["matchConditions"]
    assert f'"system:serviceaccount:{NAMESPACE}:{FULLNAME}"' in condition["expression"]
    off = render({"rbac": {"onlyManagedPods": False}})
    assert not only(off, "ValidatingAdmissionPolicy")
    assert not only(off, "ValidatingAdmissionPolicyBinding")


def test_rbac_off_renders_no_role_or_binding() -> None:
    kinds = {o["kind"] for o in render(MATRIX["no-rbac"])}
    assert kinds == {
        "ServiceAccount", "Service", "PodDisruptionBudget", "Deployment", "Secret", "APIService"
    }  # fmt: skip


def test_leader_election_off_passes_no_leader_elect_and_drops_the_lease_role() -> None:
    objects = render(MATRIX["no-leader-election"])
    rendered = args(objects)
    assert "--no-leader-elect" in rendered
    assert "--leader-elect" not in rendered
    assert not [
        a for a in rendered if a.startswith(("--lease-", "--renew-", "--retry-", "--identity"))
    ]
    assert not [r for r in only(objects, "Role") if "leader" in r["metadata"]["name"]]


def test_a_renew_deadline_not_shorter_than_the_lease_is_refused() -> None:
    values = {"leaderElection": {"leaseDuration": 10, "renewDeadline": 10}}
    result = with_values("template", values)
    assert result.returncode != 0
    assert "leaderElection.renewDeadline" in result.stderr


def test_metrics_off_renders_no_service_and_no_metrics_port() -> None:
    objects = render(MATRIX["no-metrics"])
    assert [s["metadata"]["name"] for s in only(objects, "Service")] == [
        f"{FULLNAME}-external-metrics"
    ]
    assert [p["name"] for p in container(objects)["ports"]] == ["health", "ext-metrics"]
    assert "--metrics-port=0" in args(objects)


def test_an_existing_service_account_is_bound_instead_of_created() -> None:
    objects = render(MATRIX["own-service-account"])
    assert not only(objects, "ServiceAccount")
    assert deployment(objects)["spec"]["template"]["spec"]["serviceAccountName"] == "ops"
    for binding in only(objects, "RoleBinding") + only(objects, "ClusterRoleBinding"):
        assert binding["subjects"][0]["name"] == "ops"


def test_every_tuned_value_reaches_the_pod() -> None:
    values = MATRIX["tuned"]
    objects = render(values)
    c = container(objects)
    pod = deployment(objects)["spec"]["template"]
    assert c["command"] == ["/opt/venv/bin/segue"]
    assert c["image"] == "ghcr.io/x/segue:1.2.3"
    assert c["imagePullPolicy"] == "Always"
    rendered = args(objects)
    for wanted in (
        "--busy-interval=0.25",
        "--idle-interval=7",
        "--error-backoff=3",
        "--scrape-timeout=1.5",
        "--kafka-timeout=20",
        "--scrape-workers=4",
        "--lease-duration=30",
        "--renew-deadline=20",
        "--retry-period=4",
        "--metrics-port=9500",
        "--health-port=8082",
    ):
        assert wanted in rendered
    assert rendered[-1] == "--verbose"
    assert {p["name"]: p["containerPort"] for p in c["ports"]} == {
        "metrics": 9500, "health": 8082, "ext-metrics": 6443
    }  # fmt: skip
    assert pod["metadata"]["labels"]["team"] == "data"
    assert pod["metadata"]["annotations"] == {"note": "x"}
    spec = pod["spec"]
    assert spec["nodeSelector"] == values["nodeSelector"]
    assert spec["tolerations"] == values["tolerations"]
    assert spec["priorityClassName"] == "system-cluster-critical"
    assert spec["imagePullSecrets"] == [{"name": "pull"}]
