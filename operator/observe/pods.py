"""What the API server says about a StreamApp's pods, reduced to what decisions need.

A pod is large and mostly optional fields; the decision layer needs a few facts per
member: is it running, where can it be scraped (``scrape.scrape`` at its IP), is it
Ready, is it on its way out, has it been restarting, does an init container keep it from
starting (:class:`InitFailure`). :func:`pod_state` turns one pod,
as the client's ``V1Pod`` or as the raw object a watch delivers (the operator's Kopf
index of pods, ``segue.operator.handlers``), into a frozen :class:`PodState`. Pure, so
it is tested on constructed pods.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubernetes.client import V1Pod


@dataclass(frozen=True)
class InitFailure:
    """An init container whose last run failed and has not succeeded since: the pod stays
    Pending while the kubelet retries it (``Init:CrashLoopBackOff``)."""

    container: str
    image: str
    command: tuple[str, ...]  # command + args, as the pod spec gives them
    exit_code: int
    message: str  # the termination message ("" unless the container left one)


@dataclass(frozen=True)
class PodState:
    name: str
    phase: str  # Pending, Running, Succeeded, Failed, Unknown
    ip: str | None  # status.podIP; None until the pod has one
    ready: bool  # the Ready condition is True
    terminating: bool  # metadata.deletionTimestamp is set
    restarts: int  # summed over the containers (not init containers)
    uid: str
    created: float | None  # metadata.creationTimestamp, epoch seconds
    labels: dict[str, str] = field(default_factory=dict)
    init_failure: InitFailure | None = None


def pod_state(pod: V1Pod | Mapping[str, Any]) -> PodState:
    """Reduce one pod. A pod with no status yet is ``Pending``, not ready, with no IP."""
    if isinstance(pod, Mapping):
        return _from_object(pod)
    meta = pod.metadata
    if meta is None or not meta.name:
        raise ValueError("pod without metadata.name")
    status = pod.status
    conditions: list[Any] = (status.conditions if status else None) or []
    containers: list[Any] = (status.container_statuses if status else None) or []
    return PodState(
        name=meta.name,
        phase=(status.phase if status else None) or "Pending",
        ip=(status.pod_ip if status else None) or None,
        ready=any(c.type == "Ready" and c.status == "True" for c in conditions),
        terminating=meta.deletion_timestamp is not None,
        restarts=sum(c.restart_count or 0 for c in containers),
        uid=meta.uid or "",
        created=_epoch(meta.creation_timestamp),
        labels=dict(meta.labels or {}),
        init_failure=init_failure(pod.spec, status),
    )


def _from_object(pod: Mapping[str, Any]) -> PodState:
    """The same reduction of a raw (camelCase) pod object."""
    meta = pod.get("metadata") or {}
    if not meta.get("name"):
        raise ValueError("pod without metadata.name")
    status = pod.get("status") or {}
    conditions = status.get("conditions") or []
    return PodState(
        name=meta["name"],
        phase=status.get("phase") or "Pending",
        ip=status.get("podIP") or None,
        ready=any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions),
        terminating=meta.get("deletionTimestamp") is not None,
        restarts=sum(c.get("restartCount") or 0 for c in status.get("containerStatuses") or []),
        uid=meta.get("uid") or "",
        created=_epoch(meta.get("creationTimestamp")),
        labels=dict(meta.get("labels") or {}),
        init_failure=init_failure(pod.get("spec"), status),
    )


def init_failure(spec: Any, status: Any) -> InitFailure | None:
    """The first init container that failed and has not succeeded since, of a pod's spec
    and status as a client model or a raw object (a native sidecar does not count)."""
    specs = {_get(c, "name"): c for c in _get(spec, "initContainers") or []}
    for seen in _get(status, "initContainerStatuses") or []:
        state, container = _get(seen, "state"), specs.get(_get(seen, "name"))
        ended = _get(state, "terminated") or _get(_get(seen, "lastState"), "terminated")
        code = _get(ended, "exitCode") or 0
        if not code or _get(container, "restartPolicy") == "Always":
            continue  # succeeded (its latest run ended 0) or not failed yet
        return InitFailure(
            container=str(_get(seen, "name")),
            image=str(_get(container, "image") or ""),
            command=tuple(
                str(a) for a in (_get(container, "command") or []) + (_get(container, "args") or [])
            ),
            exit_code=int(code),
            message=str(_get(ended, "message") or "").strip(),
        )
    return None


def _get(obj: Any, name: str) -> Any:
    """Field ``name`` (camelCase) of a raw object, or of a client model (snake_case)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, re.sub(r"([A-Z])", r"_\1", name).lower(), None)


def _epoch(value: datetime | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):  # a raw object keeps RFC 3339 text
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.timestamp()
