"""What a container's process gets, computed from the pod spec: pure functions.

No I/O and no threads here, so every rule is unit-tested on its own
(tests/unit/test_kubelet_podspec.py). ``supervisor`` calls these with the pod
object from the watch and lookups that ``api`` backs with the apiserver;
``volumes`` uses :func:`field_value` for downwardAPI files and
:func:`inner_path` for the mount symlinks.

The rules follow the kubelet: ``$(VAR)`` expansion as in
k8s.io/kubernetes/third_party/forked/golang/expansion, the environment built
from ``envFrom`` then ``env`` then the service variables, and the downward API
field paths the apiserver accepts.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from kubernetes.utils import parse_quantity as _parse_quantity

from segue.podenv import POD_ROOT_ENV as POD_ROOT  # where the runner shows a container its mounts
from segue.stack.kubelet.image import BASE_ENV_ALLOWLIST

Obj = dict[str, Any]
# A ConfigMap's or Secret's data by name, None when the object does not exist.
Lookup = Callable[[str], Mapping[str, bytes] | None]

parse_quantity: Callable[[str], Decimal] = _parse_quantity
_FIELD_KEY = re.compile(r"^metadata\.(labels|annotations)\['(.*)'\]$")


class ContainerConfigError(Exception):
    """The container cannot be created from its spec (kubelet: CreateContainerConfigError)."""

    def __init__(self, message: str, reason: str = "CreateContainerConfigError") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """Kubernetes ``$(VAR)`` expansion: ``$$`` is a literal ``$``; an unknown
    ``$(VAR)``, a lone ``$`` and an unclosed ``$(`` are kept as written."""
    out: list[str] = []
    checkpoint = cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            following = text[cursor + 1]
            if following == "$":
                out.append("$")
            elif following == "(":
                close = text.find(")", cursor + 2)
                if close == -1:
                    out.append("$(")
                else:
                    name = text[cursor + 2 : close]
                    value = lookup(name)
                    out.append(f"$({name})" if value is None else value)
                    cursor = close - 1
            else:
                out.append("$" + following)
            cursor += 1
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return "".join(out)


def service_env(host: str, port: int) -> dict[str, str]:
    """The variables a pod gets for the ``kubernetes`` Service."""
    url = f"tcp://{host}:{port}"
    prefix = f"KUBERNETES_PORT_{port}_TCP"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": str(port),
        "KUBERNETES_SERVICE_PORT_HTTPS": str(port),
        "KUBERNETES_PORT": url,
        prefix: url,
        f"{prefix}_PROTO": "tcp",
        f"{prefix}_PORT": str(port),
        f"{prefix}_ADDR": host,
    }


def format_map(values: Mapping[str, str]) -> str:
    """Labels or annotations as a downwardAPI file shows them: ``key="value"`` lines."""
    return "\n".join(f"{k}={json.dumps(values[k], ensure_ascii=False)}" for k in sorted(values))


def field_value(pod: Obj, path: str, pod_ip: str, host_ip: str) -> str:
    """A downward API ``fieldRef.fieldPath`` of the pod."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map(meta.get(path.split(".")[1]) or {})
    match = _FIELD_KEY.match(path)
    if match:
        return str((meta.get(match.group(1)) or {}).get(match.group(2), ""))
    raise ContainerConfigError(f"unsupported fieldPath: {path}")


def resource_value(
    container: Obj, resource: str, divisor: str | None, allocatable: Mapping[str, str]
) -> str:
    """A ``resourceFieldRef`` (e.g. ``limits.memory``); unset limits are the
    node's allocatable, as on a real node. Rounded up, as the kubelet does."""
    kind, _, name = resource.partition(".")
    if kind not in ("limits", "requests") or not name:
        raise ContainerConfigError(f"unsupported resource: {resource}")
    resources = container.get("resources") or {}
    raw = (resources.get(kind) or {}).get(name)
    if raw is None and kind == "requests":
        raw = (resources.get("limits") or {}).get(name)
    if raw is None:
        raw = allocatable.get(name, "0") if kind == "limits" else "0"
    quantity: Decimal = parse_quantity(raw)
    unit: Decimal = parse_quantity(divisor or "1")
    return str(math.ceil(quantity / unit))


def container_env(
    pod: Obj,
    container: Obj,
    *,
    config_maps: Lookup,
    secrets: Lookup,
    service: Mapping[str, str],
    pod_ip: str,
    host_ip: str,
    allocatable: Mapping[str, str],
    pod_root: str | None = None,
) -> dict[str, str]:
    """The container's environment as the kubelet builds it (without the image's).

    ``pod_root``: the container's root on the host. A variable the pod names
    ``SEGUE_POD_ROOT`` takes it (as the process's always does), so a path written
    ``$(SEGUE_POD_ROOT)/x`` with ``SEGUE_POD_ROOT`` defined empty before it is ``/x`` under a
    real kubelet and the mount's host path here: how a program that knows nothing of this
    runner (a JVM's ``-javaagent:``) finds a file in a volume."""
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    env: dict[str, str] = {}

    def data_of(kind: str, ref: Obj) -> Mapping[str, bytes] | None:
        found = (config_maps if kind == "ConfigMap" else secrets)(str(ref.get("name", "")))
        if found is None and not ref.get("optional"):
            raise ContainerConfigError(f'{kind.lower()} "{ref.get("name")}" not found')
        return found

    for source in container.get("envFrom") or []:
        kind, ref = (
            ("ConfigMap", source["configMapRef"])
            if source.get("configMapRef")
            else ("Secret", source.get("secretRef") or {})
        )
        for key, raw in (data_of(kind, ref) or {}).items():
            name = source.get("prefix", "") + key
            if "=" not in name and name.isprintable() and name:
                env[name] = raw.decode(errors="surrogateescape")

    def lookup(name: str) -> str | None:
        return env.get(name, service.get(name))

    for var in container.get("env") or []:
        name, source = var["name"], var.get("valueFrom")
        if name == POD_ROOT and pod_root is not None:
            env[name] = pod_root
        elif source is None:
            env[name] = expand(var.get("value") or "", lookup)
        elif source.get("fieldRef"):
            env[name] = field_value(pod, source["fieldRef"]["fieldPath"], pod_ip, host_ip)
        elif source.get("resourceFieldRef"):
            ref = source["resourceFieldRef"]
            target = container
            if ref.get("containerName"):
                target = find_container(pod, ref["containerName"]) or container
            env[name] = resource_value(target, ref["resource"], ref.get("divisor"), allocatable)
        elif source.get("configMapKeyRef") or source.get("secretKeyRef"):
            kind = "ConfigMap" if source.get("configMapKeyRef") else "Secret"
            ref = source.get("configMapKeyRef") or source["secretKeyRef"]
            data = data_of(kind, ref)
            if data is None:
                continue
            if ref["key"] not in data:
                if ref.get("optional"):
                    continue
                raise ContainerConfigError(
                    f"couldn't find key {ref['key']} in {kind} {namespace}/{ref.get('name')}"
                )
            env[name] = data[ref["key"]].decode(errors="surrogateescape")
        else:
            raise ContainerConfigError(f"unsupported valueFrom in env {name}")
    for name, text in service.items():
        env.setdefault(name, text)
    return env


def process_env(
    base: Mapping[str, str], env: Mapping[str, str], *, pod_root: Path, home: Path, hostname: str
) -> dict[str, str]:
    """The process's whole environment: the allow-listed base (the "image"), then
    the pod's variables; SEGUE_POD_ROOT always the runner's."""
    merged = {k: base[k] for k in BASE_ENV_ALLOWLIST if k in base}
    merged.update(HOME=str(home), HOSTNAME=hostname)
    merged.update(env)
    merged[POD_ROOT] = str(pod_root)
    return merged


def container_argv(container: Obj, env: Mapping[str, str]) -> list[str]:
    """``command`` + ``args`` with ``$(VAR)`` expanded from the container's environment."""
    command = container.get("command") or []
    if not command:
        raise ContainerConfigError(
            f"container {container.get('name')!r} has no command: the segue pod runner "
            "runs no images, so the pod spec must give the command to run",
            reason="CreateContainerError",
        )
    return [expand(part, env.get) for part in [*command, *(container.get("args") or [])]]


def inner_path(root: Path, path: str) -> Path:
    """Where the pod's path ``path`` is on the host: under ``root``, never outside
    it (``..`` stops at the root, as it does at ``/``)."""
    clean = posixpath.normpath("/" + path).lstrip("/")
    return root / clean if clean else root


def sub_path(mount: Obj, env: Mapping[str, str]) -> str:
    """A volumeMount's subPath (or expanded subPathExpr); must stay inside the volume."""
    value = mount.get("subPath") or ""
    if mount.get("subPathExpr"):
        value = expand(mount["subPathExpr"], env.get)
    if value.startswith("/") or ".." in value.split("/"):
        raise ContainerConfigError(f"invalid subPath {value!r} in volumeMount {mount.get('name')}")
    return value


def find_container(pod: Obj, name: str) -> Obj | None:
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if container.get("name") == name:
            return dict(container)
    return None


def grace_seconds(pod: Obj) -> float:
    """The termination grace period: the deletion's, else the spec's, else 30 s."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    for value in (
        meta.get("deletionGracePeriodSeconds"),
        spec.get("terminationGracePeriodSeconds"),
    ):
        if value is not None:
            return float(value)
    return 30.0


def is_sidecar(container: Obj) -> bool:
    """An init container with restartPolicy Always (a native sidecar)."""
    return container.get("restartPolicy") == "Always"


def instance_name(namespace: str, name: str, uid: str) -> str:
    """Directory name of one pod instance or one claim: namespace, name and UID."""
    return f"{namespace}_{name}_{uid}"
