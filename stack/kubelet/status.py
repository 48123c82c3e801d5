"""The pod status a kubelet reports, computed from container states: pure functions.

``container.Container`` describes each of its containers with
:func:`container_status`; ``supervisor`` gathers them and calls
:func:`pod_status`, then patches the result only when it differs from what it
sent last. The phase and condition rules follow the kubelet's ``getPhase`` and
``Generate*Condition`` (pkg/kubelet/status), so what an operator sees here is
what it would see on a real node. Unit-tested in tests/unit/test_kubelet_podspec.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

Obj = dict[str, Any]

MANAGED_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def timestamp(at: float | None = None) -> str:
    """RFC 3339, seconds, UTC: the API's metav1.Time."""
    when = dt.datetime.now(dt.UTC) if at is None else dt.datetime.fromtimestamp(at, dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def waiting(reason: str, message: str | None = None) -> Obj:
    state: Obj = {"reason": reason}
    if message:
        state["message"] = message
    return {"waiting": state}


def running(started_at: str) -> Obj:
    return {"running": {"startedAt": started_at}}


def terminated(
    exit_code: int,
    started_at: str | None,
    finished_at: str,
    *,
    reason: str | None = None,
    message: str | None = None,
    container_id: str | None = None,
) -> Obj:
    state: Obj = {
        "exitCode": exit_code,
        "reason": reason or ("Completed" if exit_code == 0 else "Error"),
        "finishedAt": finished_at,
    }
    if started_at:
        state["startedAt"] = started_at
    if message:
        state["message"] = message
    if container_id:
        state["containerID"] = container_id
    return {"terminated": state}


def exit_code_of(returncode: int) -> int:
    """A process's exit status as a container runtime reports it (signal N: 128+N)."""
    return 128 - returncode if returncode < 0 else returncode


def container_status(
    container: Obj,
    state: Obj,
    *,
    last_state: Obj | None = None,
    restart_count: int = 0,
    ready: bool = False,
    started: bool = False,
    container_id: str | None = None,
) -> Obj:
    status: Obj = {
        "name": container["name"],
        "image": container.get("image") or "",
        "imageID": "",
        "state": state,
        "lastState": last_state or {},
        "ready": ready,
        "restartCount": restart_count,
        "started": started,
    }
    if container_id:
        status["containerID"] = container_id
    return status


def _by_name(statuses: Sequence[Obj]) -> dict[str, Obj]:
    return {s["name"]: s for s in statuses}


def _has_last_termination(status: Obj) -> bool:
    return bool((status.get("lastState") or {}).get("terminated"))


def any_regular_started(statuses: Sequence[Obj]) -> bool:
    return any(
        "running" in s["state"] or "terminated" in s["state"] or _has_last_termination(s)
        for s in statuses
    )


def pod_phase(
    spec: Obj, init_statuses: Sequence[Obj], statuses: Sequence[Obj], *, terminal: bool = False
) -> str:
    """The kubelet's getPhase. ``terminal``: the pod is being deleted and all its
    containers have stopped, so restartPolicy Always no longer keeps it Running."""
    init, regular = _by_name(init_statuses), _by_name(statuses)
    policy = spec.get("restartPolicy") or "Always"
    pending_init = failed_init = pending_sidecars = 0
    unknown = running = waiting_ = stopped = succeeded = 0
    for container in spec.get("initContainers") or []:
        status = init.get(container["name"])
        state = status["state"] if status else {}
        if container.get("restartPolicy") == "Always":
            if status is None:
                unknown += 1
            elif "running" in state:
                running += 1
                pending_sidecars += 0 if status.get("started") else 1
            elif "waiting" in state and not _has_last_termination(status):
                pending_sidecars += 1
                waiting_ += 1
            continue
        if status is None or "running" in state:
            pending_init += 1
        elif "terminated" in state:
            failed_init += state["terminated"].get("exitCode", 0) != 0
        elif _has_last_termination(status):
            failed_init += status["lastState"]["terminated"].get("exitCode", 0) != 0
        else:
            pending_init += 1
    for container in spec.get("containers") or []:
        status = regular.get(container["name"])
        state = status["state"] if status else {}
        if status is None:
            unknown += 1
        elif "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += state["terminated"].get("exitCode", 0) == 0
        elif "waiting" in state and _has_last_termination(status):
            stopped += 1
        elif "waiting" in state:
            waiting_ += 1
        else:
            unknown += 1
    if failed_init and policy == "Never":
        return "Failed"
    if pending_init or (pending_sidecars and not any_regular_started(statuses)) or waiting_:
        return "Pending"
    if running and not unknown:
        return "Running"
    if not running and stopped and not unknown:
        if policy == "Always" and not terminal:
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never" or terminal:
            return "Failed"
        return "Running"
    return "Pending"


def _condition(kind: str, ok: bool, reason: str | None = None, message: str | None = None) -> Obj:
    condition: Obj = {"type": kind, "status": "True" if ok else "False"}
    if not ok and reason:
        condition["reason"] = reason
    if not ok and message:
        condition["message"] = message
    return condition


def _names(names: Sequence[str]) -> str:
    return "[" + " ".join(names) + "]"  # Go's formatting of a []string


def conditions(
    pod: Obj,
    phase: str,
    init_statuses: Sequence[Obj],
    statuses: Sequence[Obj],
    *,
    sandbox_ready: bool,
    previous: Sequence[Obj],
    now: str,
) -> list[Obj]:
    """The four conditions the kubelet owns, then the pod's others (PodScheduled,
    readiness gates, DisruptionTarget) unchanged."""
    spec = pod.get("spec") or {}
    init, regular = _by_name(init_statuses), _by_name(statuses)

    incomplete = []
    for container in spec.get("initContainers") or []:
        status = init.get(container["name"]) or {"state": {}}
        if container.get("restartPolicy") == "Always":
            done = bool(status.get("started"))
        else:
            done = (status["state"].get("terminated") or {"exitCode": 1})["exitCode"] == 0
        if not done:
            incomplete.append(container["name"])
    initialized = _condition(
        "Initialized",
        not incomplete or any_regular_started(statuses),
        "ContainersNotInitialized",
        f"containers with incomplete status: {_names(incomplete)}",
    )

    unready = [
        c["name"]
        for c in [
            *(c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"),
            *(spec.get("containers") or []),
        ]
        if not (init.get(c["name"]) or regular.get(c["name"]) or {}).get("ready")
    ]
    if phase == "Succeeded":
        containers_ready = _condition("ContainersReady", False, "PodCompleted")
    else:
        containers_ready = _condition(
            "ContainersReady",
            not unready,
            "ContainersNotReady",
            f"containers with unready status: {_names(unready)}",
        )
    ready = {**containers_ready, "type": "Ready"}
    if containers_ready["status"] == "True":
        existing = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}
        problems = []
        for gate in spec.get("readinessGates") or []:
            kind = gate["conditionType"]
            if kind not in existing:
                problems.append(
                    f'corresponding condition of pod readiness gate "{kind}" does not exist.'
                )
            elif existing[kind].get("status") != "True":
                problems.append(
                    f'the status of pod readiness gate "{kind}" is not "True", '
                    f"but {existing[kind].get('status')}"
                )
        if problems:
            ready = _condition("Ready", False, "ReadinessGatesNotReady", ", ".join(problems))

    owned = [
        _condition("PodReadyToStartContainers", sandbox_ready),
        initialized,
        ready,
        containers_ready,
    ]
    before = {c["type"]: c for c in previous}
    for condition in owned:
        old = before.get(condition["type"])
        same = old is not None and old.get("status") == condition["status"]
        condition["lastTransitionTime"] = (
            old.get("lastTransitionTime", now) if same and old else now
        )
        condition["lastProbeTime"] = None
    others = [
        c
        for c in (pod.get("status") or {}).get("conditions") or []
        if c["type"] not in MANAGED_CONDITIONS
    ]
    return [*owned, *others]


def pod_status(
    pod: Obj,
    *,
    host_ip: str,
    pod_ip: str | None,
    start_time: str,
    init_statuses: Sequence[Obj],
    statuses: Sequence[Obj],
    sandbox_ready: bool,
    terminal: bool,
    previous_conditions: Sequence[Obj],
    now: str,
) -> Obj:
    """The whole status, ready for a JSON merge patch (lists replace, None deletes)."""
    spec = pod.get("spec") or {}
    phase = pod_phase(spec, init_statuses, statuses, terminal=terminal)
    return {
        "phase": phase,
        "conditions": conditions(
            pod,
            phase,
            init_statuses,
            statuses,
            sandbox_ready=sandbox_ready,
            previous=previous_conditions,
            now=now,
        ),
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}] if pod_ip else None,
        "startTime": start_time,
        "initContainerStatuses": list(init_statuses) or None,
        "containerStatuses": list(statuses),
        "reason": None,
        "message": None,
    }


def owned_conditions(status: Obj) -> list[Obj]:
    return [c for c in status.get("conditions") or [] if c["type"] in MANAGED_CONDITIONS]
