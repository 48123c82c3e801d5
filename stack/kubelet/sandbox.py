"""A pod's place on the host (its "sandbox"), and what each container is launched with.

:class:`Sandbox` holds one pod instance's address (from ``ipam``),
its directories (``<root>/pods/<namespace>_<pod>_<uid>/``: ``rootfs/``,
``volumes/``, ``home/``, ``logs/``) and its volumes (``volumes.PodVolumes``).
:meth:`Sandbox.launch` turns a container spec into a :class:`Launch` -- argv,
environment and working directory from ``podspec``, mount symlinks made -- that
``container.Container`` starts. ``supervisor`` owns one Sandbox per pod and
decides when to prepare it, launch into it and tear it down.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue.stack.kubelet.context import NodeContext
from segue.stack.kubelet.podspec import (
    container_argv,
    container_env,
    inner_path,
    instance_name,
    process_env,
)
from segue.stack.kubelet.probes import ProbeTarget
from segue.stack.kubelet.token import Token, request_token
from segue.stack.kubelet.volumes import MountError, PodVolumes

Obj = dict[str, Any]


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    target: ProbeTarget  # where probes and hooks reach the container


class Sandbox:
    def __init__(self, ctx: NodeContext, pod: Obj) -> None:
        meta = pod["metadata"]
        self.ctx = ctx
        self.namespace: str = meta["namespace"]
        self.name: str = meta["name"]
        self.dir = ctx.pods_root / instance_name(self.namespace, self.name, meta["uid"])
        self.pod_ip: str | None = None
        self.volumes: PodVolumes | None = None
        self._pod = pod  # the newest version, for tokens requested later

    @property
    def ready(self) -> bool:
        return self.volumes is not None

    def prepare(self, pod: Obj) -> None:
        """Address, directories, volumes. MountError or ApiException: try again later."""
        self._pod = pod
        if self.pod_ip is None:
            hostnet = (pod.get("spec") or {}).get("hostNetwork")
            self.pod_ip = self.ctx.host_ip if hostnet else self.ctx.ipam.allocate()
        for part in ("rootfs", "volumes", "home", "logs"):
            (self.dir / part).mkdir(parents=True, exist_ok=True)
        ctx, namespace = self.ctx, self.namespace

        def claim_dir(name: str) -> Path:
            try:
                return ctx.claims.directory(namespace, name)
            except KeyError as exc:
                raise MountError(str(exc).strip("'\"")) from exc

        def tokens(audience: str | None, seconds: int) -> Token:
            return request_token(ctx.api, self._pod, audience, seconds)

        volumes = PodVolumes(
            pod,
            self.dir / "volumes",
            config_maps=lambda name: ctx.config_map(namespace, name),
            secrets=lambda name: ctx.secret(namespace, name),
            claim_dir=claim_dir,
            tokens=tokens,
            pod_ip=self.pod_ip,
            host_ip=ctx.host_ip,
            allocatable=ctx.allocatable,
            content_refresh=ctx.content_refresh,
        )
        volumes.setup(pod)
        self.volumes = volumes

    def refresh(self, pod: Obj) -> None:
        """Rewrite the file volumes when due (tokens at 80% of their lifetime)."""
        self._pod = pod
        if self.volumes is not None and self.volumes.refresh_due():
            self.volumes.refresh(pod)

    def launch(self, pod: Obj, container: Obj) -> Launch:
        """What the container's process runs with; its mounts made.
        ContainerConfigError or MountError: it cannot start (yet)."""
        assert self.volumes is not None
        assert self.pod_ip is not None
        ctx, namespace = self.ctx, self.namespace
        root = self.dir / "rootfs" / container["name"]
        env = container_env(
            pod,
            container,
            config_maps=lambda name: ctx.config_map(namespace, name),
            secrets=lambda name: ctx.secret(namespace, name),
            service=ctx.service,
            pod_ip=self.pod_ip,
            host_ip=ctx.host_ip,
            allocatable=ctx.allocatable,
            pod_root=str(root),
        )
        env.update(ctx.overrides.get((namespace, self.name), {}))  # a test's route (runner)
        argv = container_argv(container, env)
        root.mkdir(parents=True, exist_ok=True)
        self.volumes.mount(root, container, env)
        workdir = container.get("workingDir")
        cwd = inner_path(root, workdir) if workdir else root
        cwd.mkdir(parents=True, exist_ok=True)
        hostname = (pod.get("spec") or {}).get("hostname") or self.name
        full_env = process_env(
            ctx.base_env, env, pod_root=root, home=self.dir / "home", hostname=hostname
        )
        ports = {
            p["name"]: int(p["containerPort"])
            for p in container.get("ports") or []
            if p.get("name")
        }
        return Launch(argv, full_env, cwd, ProbeTarget(self.pod_ip, ports, full_env, cwd))

    def teardown(self) -> None:
        """Remove the pod's directories but its logs (kept for post-mortems)."""
        if self.volumes is not None:
            self.volumes.teardown()
        for part in ("rootfs", "volumes", "home"):
            shutil.rmtree(self.dir / part, ignore_errors=True)

    def release(self) -> None:
        """Give the pod's address back."""
        if self.pod_ip and self.pod_ip != self.ctx.host_ip:
            self.ctx.ipam.release(self.pod_ip)
