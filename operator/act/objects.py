"""Builders of the Kubernetes objects of one StreamApp: plain dicts, no API calls.

Pods are managed one by one (not a StatefulSet) because the decision core chooses
which member leaves and when. Every object carries an owner reference to the
StreamApp, so deleting the app deletes them. A pod's environment is the worker's
contract (docs/worker.md): downward-API identity, the application id, Kafka
bootstrap servers, credentials as ``SEGUE_KAFKA_<KEY>`` variables taken from the
Secret by reference (never copied into the pod spec), and the state directory on
the pod's claim (or an emptyDir). Pods run hardened unless the template says
otherwise: non-root as the image's user, no privilege escalation, no capabilities
and a read-only root filesystem, so the worker writes only to its state volume and
to an emptyDir at ``TMPDIR``. :mod:`.apply` sends these;
:mod:`segue.operator.api.names` names them.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from segue.operator.api import API_VERSION, KIND, StreamAppSpec
from segue.operator.api.names import (
    PUBLISHED_BY,
    TEMPLATE_HASH_LABEL,
    claim,
    labels,
    worker_account,
)
from segue.operator.settings import KafkaStreamsAgent
from segue.protocol.document import configmap_data
from segue.protocol.names import (
    ENV_APPLICATION_ID,
    ENV_BOOTSTRAP_SERVERS,
    ENV_METRICS_PORT,
    ENV_POD_IP,
    ENV_POD_NAME,
    ENV_POD_NAMESPACE,
    ENV_STATE_DIR,
    ENV_STREAMAPP,
    ENV_TMPDIR,
    HEALTH_PATH,
    READY_PATH,
    assignment_configmap,
    kafka_env_name,
)
from segue.protocol.probes import LIVENESS_TOLERANCE_SECONDS

WORKER_CONTAINER = "worker"
WORKER_USER = 10001  # the image's USER (Dockerfile), numeric so runAsNonRoot can check it
TMP_DIR = "/tmp"  # an emptyDir: the root filesystem is read-only

# Segue's defaults; the template's securityContext / podSecurityContext replace them.
POD_SECURITY_CONTEXT: dict[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": WORKER_USER,
    "runAsGroup": WORKER_USER,
    "fsGroup": WORKER_USER,  # the state claim is writable by the worker's group
    "seccompProfile": {"type": "RuntimeDefault"},
}
CONTAINER_SECURITY_CONTEXT: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def owner_reference(name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def metadata(name: str, app: str, uid: str, member: str | None = None) -> dict[str, Any]:
    """Name, the app's labels and its owner reference: every object of an app has them."""
    return {
        "name": name,
        "labels": labels(app, member),
        "ownerReferences": [owner_reference(app, uid)],
    }


# What a pod is built from: a change of any of these rolls the pods.
POD_FIELDS = ("template", "kafka", "application_id", "metrics_port", "state_dir")


def template_hash(spec: StreamAppSpec, agent: KafkaStreamsAgent | None = None) -> str:
    """A short, stable hash of the pod-defining part of ``spec`` (the pod label that tells
    which pods a change has reached, as a Deployment's ``pod-template-hash`` does). The
    runtime and the probes count only when they are not the defaults, so pods built
    before those fields existed stay; a Kafka Streams pod's ``agent`` (the operator's
    image and jar its init container copies from) counts too, so pods built with a wrong
    one are replaced once it is fixed."""
    part = spec.model_dump(mode="json", include=set(POD_FIELDS), by_alias=True)
    if spec.runtime != "segue":
        part["runtime"] = spec.runtime
    if probes := spec.probes.model_dump(mode="json", by_alias=True, exclude_defaults=True):
        part["probes"] = probes
    if spec.runtime == "kafka-streams" and agent is not None:
        part["agent"] = agent.model_dump(mode="json")
    return hashlib.sha256(json.dumps(part, sort_keys=True).encode()).hexdigest()[:10]


def pod(
    app: str,
    uid: str,
    member: str,
    spec: StreamAppSpec,
    secret_keys: Iterable[str] = (),
    *,
    agent: KafkaStreamsAgent | None = None,
) -> dict[str, Any]:
    """``agent``: for a Kafka Streams pod, what :func:`.agent.with_agent` adds (hashed)."""
    template, period = spec.template, spec.probes.period_seconds
    env: list[dict[str, Any]] = [
        e.model_dump(by_alias=True, exclude_none=True) for e in template.env
    ]
    if all(e.name != ENV_TMPDIR for e in template.env):
        env.append({"name": ENV_TMPDIR, "value": TMP_DIR})
    env += [
        _field_env(ENV_POD_NAME, "metadata.name"),
        _field_env(ENV_POD_NAMESPACE, "metadata.namespace"),
        _field_env(ENV_POD_IP, "status.podIP"),
        {"name": ENV_STREAMAPP, "value": app},
        {"name": ENV_APPLICATION_ID, "value": spec.application_id},
        {"name": ENV_BOOTSTRAP_SERVERS, "value": spec.kafka.bootstrap_servers},
        {"name": ENV_METRICS_PORT, "value": str(spec.metrics_port)},
        {"name": ENV_STATE_DIR, "value": spec.state_dir},
    ]
    secret = spec.kafka.credentials_secret
    for key in sorted(secret_keys):
        env.append(
            {
                "name": kafka_env_name(key),
                "valueFrom": {"secretKeyRef": {"name": secret.name, "key": key}}
                if secret
                else None,
            }
        )
    ports = [p.model_dump(by_alias=True, exclude_none=True) for p in template.ports]
    if all(p["containerPort"] != spec.metrics_port for p in ports):
        ports.append({"name": "metrics", "containerPort": spec.metrics_port, "protocol": "TCP"})
    container: dict[str, Any] = {
        "name": WORKER_CONTAINER,
        "image": template.image,
        "env": env,
        "ports": ports,
        "volumeMounts": [{"name": "state", "mountPath": spec.state_dir}],
        "securityContext": copy.deepcopy(
            template.security_context
            if template.security_context is not None
            else CONTAINER_SECURITY_CONTEXT
        ),
        "readinessProbe": http_probe(READY_PATH, spec.metrics_port, 3, period),
        # the same tolerance whatever the period: the worker's own bounds build on it
        "livenessProbe": http_probe(
            HEALTH_PATH, spec.metrics_port, -(-LIVENESS_TOLERANCE_SECONDS // period), period
        ),
    }
    for key, value in (
        ("command", template.command),
        ("args", template.args),
        ("imagePullPolicy", template.image_pull_policy),
    ):
        if value is not None:
            container[key] = value
    resources = template.resources.model_dump(by_alias=True, exclude_defaults=True)
    if resources:
        container["resources"] = resources
    if spec.state.volume_claim is not None:
        volume: dict[str, Any] = {
            "name": "state",
            "persistentVolumeClaim": {"claimName": claim(member)},
        }
    else:
        volume = {"name": "state", "emptyDir": {}}
    volumes = [volume]
    if spec.state_dir != TMP_DIR:  # else the state volume is the temp directory too
        volumes.append({"name": "tmp", "emptyDir": {}})
        container["volumeMounts"].append({"name": "tmp", "mountPath": TMP_DIR})
    pod_security = (
        template.pod_security_context
        if template.pod_security_context is not None
        else POD_SECURITY_CONTEXT
    )
    meta = metadata(member, app, uid, member)
    meta["labels"] = {
        **template.labels,
        **meta["labels"],
        TEMPLATE_HASH_LABEL: template_hash(spec, agent),
    }
    if template.annotations:
        meta["annotations"] = dict(template.annotations)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "hostname": member,
            "serviceAccountName": worker_account(app),
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "securityContext": copy.deepcopy(pod_security),
            "containers": [container],
            "volumes": volumes,
        },
    }


def state_claim(app: str, uid: str, member: str, spec: StreamAppSpec) -> dict[str, Any] | None:
    wanted = spec.state.volume_claim
    if wanted is None:
        return None
    body: dict[str, Any] = {
        "accessModes": list(wanted.access_modes),
        "resources": {"requests": {"storage": wanted.size}},
    }
    if wanted.storage_class_name is not None:
        body["storageClassName"] = wanted.storage_class_name
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(claim(member), app, uid, member),
        "spec": body,
    }


def assignment(
    app: str, uid: str, generation: int, document: bytes, publisher: str
) -> dict[str, Any]:
    """The assignment ConfigMap of one generation; ``document`` is the encoded document.

    ``publisher`` (the operator replica's identity) is written beside it, so who published
    each generation can be read back, e.g. across a leader failover."""
    data, binary = configmap_data(generation, document)
    meta = metadata(assignment_configmap(app), app, uid)
    meta["annotations"] = {PUBLISHED_BY: publisher}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": data,
        "binaryData": binary,
    }


def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def http_probe(path: str, port: int, failures: int, period: int) -> dict[str, Any]:
    """A probe asking ``path`` every ``period`` s (``spec.probes``); the agent's pods use
    it too."""
    return {
        "httpGet": {"path": path, "port": port},
        "periodSeconds": period,
        "failureThreshold": failures,
    }
