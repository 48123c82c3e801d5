"""What the API server says about a StreamApp's pods, reduced to what decisions need.

A ``V1Pod`` is large and mostly optional fields; the decision layer needs a few
facts per member: is it running, where can it be scraped (``metrics.scrape`` at
its IP), is it Ready, is it on its way out, has it been restarting. :func:`pod_state`
turns one pod into a frozen :class:`PodState` (pure, so it is tested on
constructed pods); :func:`list_app_pods` lists an app's pods by the
``segue.dev/app`` label the operator puts on every pod it creates (the same label
as on the assignment ConfigMap, docs/protocol.md). API errors propagate as the
client's ``ApiException``: whether to retry is the caller's call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubernetes.client import CoreV1Api, V1Pod

from segue.protocol.names import APP_LABEL

PAGE = 500  # pods per list request


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


def pod_state(pod: V1Pod) -> PodState:
    """Reduce one pod. A pod with no status yet is ``Pending``, not ready, with no IP."""
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
    )


def _epoch(value: datetime | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):  # a dict-built pod keeps RFC 3339 text
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.timestamp()


def list_app_pods(api: CoreV1Api, namespace: str, app: str) -> dict[str, PodState]:
    """Every pod of StreamApp ``app`` in ``namespace`` (label ``segue.dev/app=<app>``),
    by name, terminating ones included."""
    pods: dict[str, PodState] = {}
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"label_selector": f"{APP_LABEL}={app}", "limit": PAGE}
        if token:
            kwargs["_continue"] = token
        page = api.list_namespaced_pod(namespace, **kwargs)
        for pod in page.items:
            state = pod_state(pod)
            pods[state.name] = state
        token = page.metadata._continue if page.metadata else None
        if not token:
            return pods
