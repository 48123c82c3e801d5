"""Stopping a pod's containers when the pod is deleted, as the kubelet does.

:class:`Termination` is driven by ``supervisor`` once the pod has a
deletionTimestamp, one :meth:`Termination.step` per supervisor tick: the first
step gives every running container its preStop hook and SIGTERM
(``container.Container.terminate``) with the pod's grace period; a later
delete with a shorter grace period brings the SIGKILL deadline forward; native
sidecars are stopped only after the other containers have exited.
:func:`final_states` then settles the states the final status reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from segue.stack.kubelet import status as st
from segue.stack.kubelet.container import Container

SIDECAR_MIN_GRACE = 1.0  # seconds a sidecar gets even when the pod's grace is spent


class Termination:
    def __init__(
        self,
        containers: Sequence[Container],
        *,
        reset_after: float,
        on_stop: Callable[[Container], None],
    ) -> None:
        self.containers = list(containers)
        self.reset_after = reset_after
        self.on_stop = on_stop  # tells the story (a Killing event)
        self._deadline: float | None = None

    def step(self, grace: float) -> bool:
        """Advance termination with the pod's current grace period (seconds);
        True once no process of the pod is left."""
        now = time.monotonic()
        deadline = now + grace
        others = [c for c in self.containers if not c.sidecar]
        sidecars = [c for c in self.containers if c.sidecar]
        if self._deadline is None:
            self._deadline = deadline
            for container in others:
                if container.alive:
                    self.on_stop(container)
                    container.terminate(deadline - now)
        elif deadline < self._deadline:  # deleted again with a shorter grace period
            self._deadline = deadline
            for container in self.containers:
                if container.terminating:
                    container.terminate(deadline - now)
        for container in self.containers:
            container.poll(self.reset_after)
        if not any(c.alive for c in others):
            for sidecar in sidecars:
                if sidecar.alive and not sidecar.terminating:
                    self.on_stop(sidecar)
                    sidecar.terminate(max(self._deadline - now, SIDECAR_MIN_GRACE))
        return not any(c.alive for c in self.containers)


def final_states(containers: Sequence[Container]) -> None:
    """A container still waiting when its pod ends reports its last termination,
    or, if it never ran, the kubelet's ContainerStatusUnknown."""
    for container in containers:
        if "waiting" not in container.state:
            continue
        if container.last_state.get("terminated"):
            container.state, container.last_state = container.last_state, {}
        else:
            container.state = st.terminated(
                137,
                None,
                st.timestamp(),
                reason="ContainerStatusUnknown",
                message="The container could not be located when the pod was terminated",
            )
