"""Fixtures for the operator's tests: StreamApp manifests, and the StreamApp CRD
installed in the session's real API server (tests/conftest.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.operator.api import API_VERSION, KIND
from segue.stack.apps import Apps

from .e2e import OperatorProcess

_MINIMAL_SPEC: dict[str, Any] = {
    "applicationId": "streams-wordcount",
    "kafka": {"bootstrapServers": "kafka:9092"},
    "template": {"image": "segue:dev"},
}
# Every field of the spec set to a value that is not its default.
_FULL_SPEC: dict[str, Any] = {
    "replicas": 3,
    "applicationId": "streams-wordcount",
    "kafka": {
        "bootstrapServers": "kafka:9092",
        "credentialsSecret": {"name": "kafka-creds"},
        "operatorCredentialsSecret": {"name": "kafka-operator-creds"},
    },
    "runtime": "segue",
    "template": {
        "image": "segue:dev",
        "command": ["segue", "worker"],
        "args": ["--app", "segue.worker.apps.wordcount:topology"],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "t", "key": "token"}}},
        ],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 2}},
        "ports": [{"name": "debug", "containerPort": 5005, "protocol": "UDP"}],
        "imagePullPolicy": "IfNotPresent",
        "labels": {"team": "data"},
        "annotations": {"segue.dev/note": "x"},
        "securityContext": {"runAsUser": 2000, "readOnlyRootFilesystem": False},
        "podSecurityContext": {"fsGroup": 2000},
    },
    "metricsPort": 9500,
    "stateDir": "/data",
    "topology": {
        "subTopologies": [
            {"id": 0, "sourceTopics": ["text"], "stores": []},
            {"id": 1, "sourceTopics": ["wc-counts-repartition"], "stores": ["counts"]},
        ]
    },
    "scaling": {
        "acceptableRecoveryLag": 100,
        "maxWarmupReplicas": 1,
        "numStandbyReplicas": 1,
        "scaleDownTimeoutSeconds": 60,
        "registrationTimeoutSeconds": 30,
        "expansionTimeoutSeconds": 5,
        "balanceTolerance": 1.5,
        "learnerPromotion": "batch",
    },
    "rollout": {"maxUnavailable": 2},
    "autoscaling": {"catchUpSeconds": 60, "windowSeconds": 30},
    "probes": {"periodSeconds": 5},
    "state": {
        "retention": "Retain",
        "volumeClaim": {
            "size": "10Gi",
            "storageClassName": "fast",
            "accessModes": ["ReadWriteOncePod"],
        },
    },
}
# Every field of the status set.
_FULL_STATUS: dict[str, Any] = {
    "phase": "Scaling",
    "replicas": 3,
    "readyReplicas": 2,
    "updatedReplicas": 1,
    "selector": "segue.dev/app=wordcount",
    "assignmentGeneration": 7,
    "maxLag": 1200,
    "observedGeneration": 2,
    "lastScaleTime": "2025-01-31T12:00:00Z",
    "members": [
        {"name": "wordcount-0", "role": "member", "active": 3, "standby": 0, "learning": 0,
         "ready": True},
        {"name": "wordcount-2", "role": "joining", "active": 0, "standby": 0, "learning": 2,
         "maxLag": 1200, "ready": False},
    ],
    "conditions": [
        {"type": "Scaling", "status": "True", "reason": "ScalingUp",
         "message": "2 learners warming up", "lastTransitionTime": "2025-01-31T12:00:00Z",
         "observedGeneration": 2},
    ],
    "scaling": {
        "joining": {"wordcount-2": "2025-01-31T12:00:00Z"},
        "leaving": {"wordcount-3": "2025-01-31T12:00:01Z"},
        "absent": {"wordcount-4": "2025-01-31T12:00:02Z"},
        "handovers": {"1_2": {"to": "wordcount-2", "since": "2025-01-31T12:00:05.5+01:00"}},
        "forcedAt": "2025-01-31T11:00:00Z",
        "rolling": {"wordcount-1": "2025-01-31T12:00:03Z"},
        "refenced": {"0_3": "2025-01-31T12:00:04Z"},
    },
    "autoscaling": {
        "observedAt": "2025-01-31T12:00:04Z",
        "replicasNeeded": 2.5,
        "lagRecords": 1200,
        "inputRecordsPerSecond": 300.5,
        "processedRecordsPerSecond": 250.25,
        "secondsToCatchUp": 24.0,
        "projectedSecondsToCatchUp": 8.0,
    },
}  # fmt: skip


# Invalid specs as (spec changes, the field the error must name). Tests that take the
# `bad_spec` argument run once for each: test_api.py against the models, test_crd.py
# against the API server, so the two must agree.
BAD_SPECS: list[tuple[dict[str, Any], str]] = [
    ({"scaling": {"learnerPromotion": "lazy"}}, "spec.scaling.learnerPromotion"),
    ({"replicas": -1}, "spec.replicas"),
    ({"metricsPort": 70000}, "spec.metricsPort"),
    ({"applicationId": "has spaces"}, "spec.applicationId"),
    ({"stateDir": "relative/path"}, "spec.stateDir"),
    ({"scaling": {"balanceTolerance": 11}}, "spec.scaling.balanceTolerance"),
    ({"scaling": {"maxWarmupReplicas": 0}}, "spec.scaling.maxWarmupReplicas"),
    ({"template": {"args": ["x"]}}, "spec.template.image"),
    ({"template": {"image": "i", "env": [{"name": "1A"}]}}, "spec.template.env[0].name"),
    (
        {"template": {"image": "i", "resources": {"limits": {"cpu": "two"}}}},
        "spec.template.resources.limits.cpu",
    ),
    (
        {"template": {"image": "i", "ports": [{"containerPort": 0}]}},
        "spec.template.ports[0].containerPort",
    ),
    ({"kafka": {"bootstrapServers": ""}}, "spec.kafka.bootstrapServers"),
    (
        {"kafka": {"bootstrapServers": "k", "credentialsSecret": {"name": "Bad_Name"}}},
        "spec.kafka.credentialsSecret.name",
    ),
    ({"state": {"retention": "Keep"}}, "spec.state.retention"),
    ({"autoscaling": {"catchUpSeconds": 0}}, "spec.autoscaling.catchUpSeconds"),
    ({"autoscaling": {"windowSeconds": 2}}, "spec.autoscaling.windowSeconds"),
    ({"probes": {"periodSeconds": 0}}, "spec.probes.periodSeconds"),
    ({"rollout": {"maxUnavailable": 0}}, "spec.rollout.maxUnavailable"),
    ({"state": {"volumeClaim": {"size": "lots"}}}, "spec.state.volumeClaim.size"),
    ({"topology": {"subTopologies": []}}, "spec.topology.subTopologies"),
]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bad_spec" in metafunc.fixturenames:
        metafunc.parametrize("bad_spec", BAD_SPECS, ids=[field for _, field in BAD_SPECS])


@pytest.fixture
def manifest() -> Callable[..., dict[str, Any]]:
    """``manifest(name="wordcount", **spec_changes)``: a minimal valid StreamApp."""

    def make(name: str = "wordcount", **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": name},
            "spec": {**copy.deepcopy(_MINIMAL_SPEC), **spec},
        }

    return make


@pytest.fixture
def full_spec() -> dict[str, Any]:
    return copy.deepcopy(_FULL_SPEC)


@pytest.fixture
def full_status() -> dict[str, Any]:
    return copy.deepcopy(_FULL_STATUS)


@pytest.fixture
def operator(
    kube: Any, namespace: str, tmp_path: Path, streamapp_crd: Any
) -> Iterator[OperatorProcess]:
    """``segue operator`` as a process, watching the test's namespace."""
    proc = OperatorProcess(kube.kubeconfig, namespace, tmp_path).start()
    yield proc
    proc.stop()


@pytest.fixture
def apps(kube_api: Any, namespace: str) -> Apps:
    return Apps(kube_api, namespace)
