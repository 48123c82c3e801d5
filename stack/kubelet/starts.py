"""Starting a pod's container, and starting it again with back-off: the part of
``supervisor.PodSupervisor`` that launches processes.

The supervisor decides *when* a container runs (init order, restartPolicy through
:func:`should_restart`, a failed liveness probe); :class:`Starts` does the launch: it
asks the pod's ``sandbox.Sandbox`` for the command line, environment and mounts, waits
out the back-off of a container that failed (``CrashLoopBackOff``), retries a config or
mount error after ``RETRY``, and records the events a kubelet would (``Started``,
``Failed``, ``BackOff``, ``Unhealthy`` from the container's probes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from segue.stack.kubelet.container import Container
from segue.stack.kubelet.context import NodeContext
from segue.stack.kubelet.podspec import ContainerConfigError, grace_seconds
from segue.stack.kubelet.sandbox import Sandbox
from segue.stack.kubelet.volumes import MountError

Obj = dict[str, Any]
RETRY = 2.0  # seconds before retrying a mount or a container config that failed


def should_restart(container: Container, policy: str) -> bool:
    """Whether ``policy`` (the pod's restartPolicy) runs an exited container again."""
    if policy == "Always":
        return True
    if policy == "OnFailure":
        return container.restart_forced or container.exit_code != 0
    return False


def probe_grace(pod: Obj, container: Container, kind: str) -> float:
    """The grace period of a container killed by its failed ``kind`` probe."""
    probe = container.spec.get(f"{kind}Probe") or {}
    value = probe.get("terminationGracePeriodSeconds")
    return float(value) if value is not None else grace_seconds(pod)


class Starts:
    def __init__(
        self, sandbox: Sandbox, ctx: NodeContext, event: Callable[..., None], who: str
    ) -> None:
        """``event(reason, message, warning=, container=, every=)`` records a pod event;
        ``who``: the pod as the kubelet names it in messages, ``name_namespace(uid)``."""
        self.sandbox, self.ctx, self.event, self.who = sandbox, ctx, event, who

    def restart(self, pod: Obj, container: Container) -> None:
        if container.next_start is None:
            delay = container.backoff_delay(self.ctx.backoff_base, self.ctx.backoff_cap)
            container.next_start = time.monotonic() + delay
            if delay > 0:
                container.set_waiting(
                    "CrashLoopBackOff",
                    f"back-off {delay:g}s restarting failed container={container.name} "
                    f"pod={self.who}",
                )
                self.event(
                    "BackOff",
                    f"Back-off restarting failed container {container.name} in pod {self.who}",
                    warning=True,
                    container=container.name,
                )
        self.start(pod, container)

    def start(self, pod: Obj, container: Container) -> None:
        now = time.monotonic()
        if container.next_start is not None and now < container.next_start:
            return
        try:
            launch = self.sandbox.launch(pod, container.spec)
        except (ContainerConfigError, MountError) as exc:
            reason = (
                exc.reason
                if isinstance(exc, ContainerConfigError)
                else "CreateContainerConfigError"
            )
            container.set_waiting(reason, str(exc))
            container.next_start = now + RETRY
            self.event("Failed", f"Error: {exc}", warning=True, container=container.name, every=30)
            return

        def probe_failed(kind: str, message: str) -> None:
            self.event(
                "Unhealthy",
                f"{kind.capitalize()} probe failed: {message}",
                warning=True,
                container=container.name,
                every=10,
            )

        try:
            container.start(
                launch.argv,
                launch.env,
                launch.cwd,
                launch.target,
                on_probe_failure=probe_failed,
                grace=grace_seconds(pod),
            )
        except OSError as exc:
            container.failures += 1
            self.event(
                "Failed",
                f"Error: failed to start container {container.name!r}: {exc}",
                warning=True,
                container=container.name,
            )
            return
        self.event("Started", f"Started container {container.name}", container=container.name)
