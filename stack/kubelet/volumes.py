"""A pod's volumes on the host, and the mount symlinks that show them to a container.

Every volume has a backing directory: ``<pod dir>/volumes/<volume>`` for an
emptyDir and for the file volumes (configMap, secret, downwardAPI, projected),
``<root>/claims/<namespace>_<claim>_<claim uid>`` for a persistentVolumeClaim
(or a generic ephemeral volume's claim), the path itself for a hostPath. A
volumeMount becomes a symlink at ``$SEGUE_POD_ROOT/<mountPath>`` (``subPath``:
to a path inside the volume). ``supervisor`` calls :meth:`PodVolumes.setup`
before the first container starts, :meth:`PodVolumes.mount` before each start,
:meth:`PodVolumes.refresh` periodically (tokens at 80% of their lifetime,
configMap/secret/downwardAPI content every ``content_refresh`` seconds) and
:meth:`PodVolumes.teardown` when the pod is removed; claim directories belong to
``claims`` and outlive the pod.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from segue.stack.kubelet.podspec import (
    ContainerConfigError,
    Lookup,
    field_value,
    find_container,
    inner_path,
    resource_value,
    sub_path,
)
from segue.stack.kubelet.token import Token

Obj = dict[str, Any]
# (audience, expirationSeconds) -> a fresh token for the pod
TokenFactory = Callable[[str | None, int], Token]
FILE_VOLUMES = ("configMap", "secret", "downwardAPI", "projected")


class MountError(Exception):
    """A volume cannot be set up yet (kubelet event FailedMount); retried."""


class PodVolumes:
    def __init__(
        self,
        pod: Obj,
        base: Path,
        *,
        config_maps: Lookup,
        secrets: Lookup,
        claim_dir: Callable[[str], Path],
        tokens: TokenFactory,
        pod_ip: str,
        host_ip: str,
        allocatable: Mapping[str, str],
        content_refresh: float = 15.0,
    ) -> None:
        self.base = base
        self.config_maps, self.secrets = config_maps, secrets
        self.claim_dir = claim_dir  # claim name -> its directory; MountError if no claim
        self.tokens = tokens
        self.pod_ip, self.host_ip, self.allocatable = pod_ip, host_ip, allocatable
        self.content_refresh = content_refresh
        self.paths: dict[str, Path] = {}
        self._volumes = list((pod.get("spec") or {}).get("volumes") or [])
        self._cache: dict[tuple[str | None, int], Token] = {}
        self._written: dict[str, set[Path]] = {}
        self._next_refresh = 0.0

    def setup(self, pod: Obj) -> None:
        for volume in self._volumes:
            self.paths[volume["name"]] = self._backing(pod, volume)
        self.refresh(pod, force=True)

    def _backing(self, pod: Obj, volume: Obj) -> Path:
        name: str = volume["name"]
        if "persistentVolumeClaim" in volume:
            return self.claim_dir(volume["persistentVolumeClaim"]["claimName"])
        if "ephemeral" in volume:
            return self.claim_dir(f"{pod['metadata']['name']}-{name}")
        if "hostPath" in volume:
            path = Path(volume["hostPath"]["path"])
            if volume["hostPath"].get("type") in ("DirectoryOrCreate", None, ""):
                path.mkdir(parents=True, exist_ok=True)
            return path
        if "emptyDir" in volume or any(kind in volume for kind in FILE_VOLUMES):
            path = self.base / name
            path.mkdir(parents=True, exist_ok=True)
            return path
        kinds = sorted(set(volume) - {"name"})
        raise MountError(f"volume {name!r}: type {kinds} is not supported by the segue pod runner")

    def refresh_due(self) -> bool:
        return time.time() >= self._next_refresh

    def refresh(self, pod: Obj, force: bool = False) -> None:
        """(Re)write the file volumes; tokens only when due (or missing)."""
        if not force and not self.refresh_due():
            return
        next_refresh = time.time() + self.content_refresh
        for volume in self._volumes:
            kind = next((k for k in FILE_VOLUMES if k in volume), None)
            if kind is None:
                continue
            sources = (
                (volume[kind].get("sources") or [])
                if kind == "projected"
                else [{kind: volume[kind]}]
            )
            default_mode = volume[kind].get("defaultMode", 0o644)
            files: dict[str, tuple[bytes, int]] = {}
            for source in sources:
                files.update(self._source_files(pod, source, default_mode))
            self._write(volume["name"], files)
        for token in self._cache.values():
            next_refresh = min(next_refresh, token.refresh_at)
        self._next_refresh = next_refresh

    def _source_files(
        self, pod: Obj, source: Obj, default_mode: int
    ) -> dict[str, tuple[bytes, int]]:
        if "serviceAccountToken" in source:
            spec = source["serviceAccountToken"]
            key = (spec.get("audience"), int(spec.get("expirationSeconds") or 3600))
            token = self._cache.get(key)
            if token is None or time.time() >= token.refresh_at:
                token = self._cache[key] = self.tokens(*key)
            return {spec["path"]: (token.value.encode(), default_mode)}
        if "downwardAPI" in source:
            files = {}
            for item in source["downwardAPI"].get("items") or []:
                files[item["path"]] = (
                    self._downward(pod, item).encode(),
                    item.get("mode", default_mode),
                )
            return files
        kind = "configMap" if "configMap" in source else "secret"
        spec = source[kind]
        name = spec.get("name") or spec.get("secretName") or ""
        data = (self.config_maps if kind == "configMap" else self.secrets)(name)
        if data is None:
            if spec.get("optional"):
                return {}
            raise MountError(f'{kind.lower()} "{name}" not found')
        items = spec.get("items") or [{"key": k, "path": k} for k in sorted(data)]
        files = {}
        for item in items:
            if item["key"] not in data:
                if spec.get("optional"):
                    continue
                raise MountError(f"{kind.lower()} {name!r} has no key {item['key']!r}")
            files[item["path"]] = (data[item["key"]], item.get("mode", default_mode))
        return files

    def _downward(self, pod: Obj, item: Obj) -> str:
        try:
            if item.get("fieldRef"):
                return field_value(pod, item["fieldRef"]["fieldPath"], self.pod_ip, self.host_ip)
            ref = item["resourceFieldRef"]
            container = find_container(pod, ref.get("containerName", "")) or {}
            return resource_value(container, ref["resource"], ref.get("divisor"), self.allocatable)
        except (ContainerConfigError, KeyError) as exc:
            raise MountError(f"downwardAPI item {item.get('path')!r}: {exc}") from exc

    def _write(self, volume: str, files: Mapping[str, tuple[bytes, int]]) -> None:
        root = self.paths[volume]
        written = set()
        for relative, (content, mode) in files.items():
            path = inner_path(root, relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            if (
                not path.exists()
                or path.read_bytes() != content
                or (path.stat().st_mode & 0o777) != mode
            ):
                scratch = path.with_name(f".{path.name}.tmp")
                scratch.write_bytes(content)
                scratch.chmod(mode)
                os.replace(scratch, path)  # atomic: a reader sees the old or the new file
            written.add(path)
        for stale in self._written.get(volume, set()) - written:
            stale.unlink(missing_ok=True)
        self._written[volume] = written

    def mount(self, root: Path, container: Obj, env: Mapping[str, str]) -> None:
        """Make the container's volumeMounts symlinks under its root ``root``."""
        for mount in container.get("volumeMounts") or []:
            if mount["name"] not in self.paths:
                raise ContainerConfigError(
                    f"volumeMount {mount['name']!r} names no volume of the pod"
                )
            target = self.paths[mount["name"]]
            below = sub_path(mount, env)
            if below:
                target = inner_path(target, below)
                if not target.exists():
                    target.mkdir(parents=True)
            link = inner_path(root, mount["mountPath"])
            if link == root:
                raise ContainerConfigError("a volume cannot be mounted at /")
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.is_file():
                link.unlink()
            elif link.is_dir():
                shutil.rmtree(link)
            link.symlink_to(target)

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
