"""Idempotent writes: every call can be repeated after a crash and ends in the same state.

Creating what exists, or deleting what is gone, is success. The assignment ConfigMap is
the one object written with optimistic concurrency: a generation is published only over
the exact version the decision was made from (``resourceVersion``), so two operators, or
one that restarted mid-step, can never publish from a stale view; the loser sees
:class:`Conflict` and decides again from a fresh observation.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.exceptions import ApiException

# The client's typed stubs want model objects; it accepts plain dicts, which we build.
Api = Any


class Conflict(Exception):
    """The assignment changed since it was read: observe again."""


def create_or_patch(
    api: Any, create: str, patch: str, namespace: str, body: dict[str, Any]
) -> None:
    try:
        getattr(api, create)(namespace, body)
    except ApiException as exc:
        if exc.status != 409:
            raise
        getattr(api, patch)(body["metadata"]["name"], namespace, body)


def ensure_worker_access(
    core: Api, rbac: Api, namespace: str, objects: list[dict[str, Any]]
) -> None:
    """ServiceAccount, Role and RoleBinding, created or brought back to what they must be;
    the group ConfigMap (``access.group``) created if missing, never overwritten: the
    plugin's report lives in it."""
    for body in objects:
        kind = body["kind"]
        if kind == "ServiceAccount":
            create_or_patch(
                core,
                "create_namespaced_service_account",
                "patch_namespaced_service_account",
                namespace,
                body,
            )
        elif kind == "Role":
            create_or_patch(
                rbac, "create_namespaced_role", "patch_namespaced_role", namespace, body
            )
        elif kind == "RoleBinding":
            create_or_patch(
                rbac,
                "create_namespaced_role_binding",
                "patch_namespaced_role_binding",
                namespace,
                body,
            )
        elif kind == "ConfigMap":
            try:
                core.create_namespaced_config_map(namespace, body)
            except ApiException as exc:
                if exc.status != 409:
                    raise
        else:  # pragma: no cover - a programming error
            raise ValueError(f"not a worker access object: {kind}")


def create(core: Api, namespace: str, body: dict[str, Any]) -> bool:
    """Create a Pod or PersistentVolumeClaim; False if it already existed."""
    method = {
        "Pod": core.create_namespaced_pod,
        "PersistentVolumeClaim": core.create_namespaced_persistent_volume_claim,
    }[body["kind"]]
    try:
        method(namespace, body)
    except ApiException as exc:
        if exc.status == 409:
            return False
        raise
    return True


def delete_pod(core: Api, namespace: str, name: str) -> bool:
    return _delete(core.delete_namespaced_pod, namespace, name)


def delete_claim(core: Api, namespace: str, name: str) -> bool:
    return _delete(core.delete_namespaced_persistent_volume_claim, namespace, name)


def _delete(method: Any, namespace: str, name: str) -> bool:
    """False if it was already gone."""
    try:
        method(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def publish(core: Api, namespace: str, body: dict[str, Any], resource_version: str | None) -> str:
    """Write a generation over exactly ``resource_version`` (None: it must not exist yet)."""
    name = body["metadata"]["name"]
    try:
        if resource_version is None:
            written = core.create_namespaced_config_map(namespace, body)
        else:
            body = {**body, "metadata": {**body["metadata"], "resourceVersion": resource_version}}
            written = core.replace_namespaced_config_map(name, namespace, body)
    except ApiException as exc:
        if exc.status in (409, 404):
            raise Conflict(f"{namespace}/{name} changed since it was read") from exc
        raise
    return str(written.metadata.resource_version)
