"""The runner's Node object.

:func:`register_node` creates (or updates) the Node with what a kubelet
reports at registration: labels, capacity and allocatable, the Ready condition
and the InternalIP 127.0.0.1, and the kubelet port ``kubectl logs`` goes
through (``logs``). No heartbeats follow: the control plane runs
without the node lifecycle controller (see ``segue.stack.kube``).

The pods' own addresses come from ``ipam``.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.stack.kubelet.api import MERGE_PATCH, Api
from segue.stack.kubelet.status import timestamp

Obj = dict[str, Any]
ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def capacity(root: Path) -> dict[str, str]:
    """What this machine offers, as a Node's capacity."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "cpu": str(os.cpu_count() or 1),
        "memory": f"{memory // 1024}Ki",
        "ephemeral-storage": f"{shutil.disk_usage(root).total // 1024}Ki",
        "pods": "110",
    }


def _read(path: str, default: str = "") -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def _os_image() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def node_status(
    host_ip: str, name: str, resources: dict[str, str], version: str, kubelet_port: int = 0
) -> Obj:
    now = timestamp()

    def condition(kind: str, status: str, reason: str, message: str) -> Obj:
        return {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }

    return {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [
            condition(
                "MemoryPressure", "False", "KubeletHasSufficientMemory", "no memory pressure"
            ),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "no disk pressure"),
            condition(
                "PIDPressure", "False", "KubeletHasSufficientPID", "sufficient PID available"
            ),
            condition(
                "Ready", "True", "KubeletReady", "the segue pod runner is posting ready status"
            ),
        ],
        "addresses": [
            {"type": "InternalIP", "address": host_ip},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
        "nodeInfo": {
            "machineID": _read("/etc/machine-id"),
            "systemUUID": _read("/etc/machine-id"),
            "bootID": _read("/proc/sys/kernel/random/boot_id"),
            "kernelVersion": platform.release(),
            "osImage": _os_image(),
            "containerRuntimeVersion": "segue-pod-runner://0.1.0",
            "kubeletVersion": version,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": ARCH.get(platform.machine(), platform.machine()),
        },
    }


def register_node(
    api: Api, name: str, host_ip: str, resources: dict[str, str], kubelet_port: int = 0
) -> None:
    """Create or update the Node ``name`` and report it Ready, with the port of its
    ``containerLogs`` endpoint (``logs``) as the kubelet's."""
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": ARCH.get(platform.machine(), platform.machine()),
        "segue.dev/pod-runner": "true",
    }
    version = str(api.request("GET", "/version").get("gitVersion", "v0.0.0"))
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
    }
    try:
        api.request("POST", "/api/v1/nodes", body=node)
    except ApiException as exc:
        if exc.status != 409:
            raise
        api.request(
            "PATCH",
            f"/api/v1/nodes/{name}",
            body={"metadata": {"labels": labels}},
            content_type=MERGE_PATCH,
        )
    api.request(
        "PATCH",
        f"/api/v1/nodes/{name}/status",
        body={"status": node_status(host_ip, name, resources, version, kubelet_port)},
        content_type=MERGE_PATCH,
    )
