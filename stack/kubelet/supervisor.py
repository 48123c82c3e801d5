"""One pod's whole life on the node, on a thread of its own (a kubelet pod worker).

``runner`` creates a :class:`PodSupervisor` for each pod bound to the node and
feeds it every new version of the pod; the supervisor loops until the pod is
gone. It prepares the pod's ``sandbox.Sandbox`` (address, directories,
volumes), runs the init containers in order and then the containers
(``container.Container``; ``starts.Starts`` launches them), restarts them per
restartPolicy with back-off or when a liveness probe fails, and reports the status
computed by ``status`` whenever it changes.

Once the pod has a deletionTimestamp, ``termination.Termination`` stops the
containers (preStop, SIGTERM, SIGKILL after the grace period); then the final
status is written, the sandbox torn down and the pod deleted from the API with
grace 0 and a UID precondition. A pod force-deleted from the API has its
processes killed at once.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.stack.kubelet import status as st
from segue.stack.kubelet.api import MERGE_PATCH
from segue.stack.kubelet.container import Container
from segue.stack.kubelet.context import NodeContext
from segue.stack.kubelet.podspec import grace_seconds
from segue.stack.kubelet.sandbox import Sandbox
from segue.stack.kubelet.starts import RETRY, Starts, probe_grace, should_restart
from segue.stack.kubelet.termination import Termination, final_states
from segue.stack.kubelet.volumes import MountError

Obj = dict[str, Any]
log = logging.getLogger(__name__)
TERMINAL = ("Succeeded", "Failed")


class PodSupervisor:
    def __init__(self, pod: Obj, ctx: NodeContext) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        self.uid: str = meta["uid"]
        self.namespace: str = meta["namespace"]
        self.name: str = meta["name"]
        self.ctx = ctx
        self.sandbox = Sandbox(ctx, pod)
        self.start_time = st.timestamp()
        self.done = threading.Event()
        logs = self.sandbox.dir / "logs"
        first = "PodInitializing" if spec.get("initContainers") else "ContainerCreating"
        self.init = [
            Container(c, init=True, logs=logs, waiting_reason="PodInitializing")
            for c in spec.get("initContainers") or []
        ]
        self.regular = [
            Container(c, init=False, logs=logs, waiting_reason=first)
            for c in spec.get("containers") or []
        ]
        self._pod = pod
        self._wake = threading.Event()
        self._gone = self._stopping = False
        self._next_prepare = 0.0
        self._termination: Termination | None = None
        self._winding_down = False  # all regular containers are done for good: stop sidecars
        self._terminal = False
        self._sent: Obj | None = None
        self._said: dict[str, float] = {}
        who = f"{self.name}_{self.namespace}({self.uid})"
        self._starts = Starts(self.sandbox, ctx, self._event, who)
        self._thread = threading.Thread(
            target=self._run, name=f"pod-{self.namespace}/{self.name}", daemon=True
        )

    # -- called by the runner ---------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def update(self, pod: Obj) -> None:
        self._pod = pod
        self._wake.set()

    def gone(self) -> None:
        """The pod was removed from the API (force-deleted): kill everything now."""
        self._gone = True
        self._wake.set()

    def stop(self) -> None:
        """The runner stops: SIGTERM, then SIGKILL after its stop grace; no API calls."""
        self._stopping = True
        self._wake.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def containers(self) -> list[Container]:
        return [*self.init, *self.regular]

    # -- the loop ------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._once():
                self._wake.wait(self.ctx.tick)
        finally:
            self.sandbox.release()
            self.done.set()

    def _once(self) -> bool:
        """One pass; True when the supervisor is done."""
        self._wake.clear()
        pod = self._pod
        try:
            if self._stopping:
                self._shutdown()
                return True
            if self._gone:
                for container in self.containers:
                    container.kill()
                self.sandbox.teardown()
                return True
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                if self._terminate(pod):
                    self._finish(pod)
                    return True
            else:
                self._reconcile(pod)
            self._report(pod)
        except Exception:
            log.exception("pod %s/%s: supervisor step failed", self.namespace, self.name)
            self._wake.wait(1.0)
        return False

    def _event(
        self,
        reason: str,
        message: str,
        *,
        warning: bool = False,
        container: str | None = None,
        every: float = 0.0,
    ) -> None:
        """Record an event; with ``every``, the same message at most that often."""
        key = f"{reason}/{container}/{message}"
        now = time.monotonic()
        if every and now - self._said.get(key, -every) < every:
            return
        self._said[key] = now
        self.ctx.events.pod_event(self._pod, reason, message, warning=warning, container=container)

    # -- running -------------------------------------------------------------

    def _reconcile(self, pod: Obj) -> None:
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        if not self._prepared(pod):
            return
        try:
            self.sandbox.refresh(pod)
        except (MountError, ApiException) as exc:
            log.warning("pod %s/%s: volume refresh failed: %s", self.namespace, self.name, exc)
        if self._terminal:
            return
        if self._init_containers(pod, policy):
            may_start = True  # containers start in order, each after its postStart hook
            for container in self.regular:
                self._step(pod, container, policy, may_start=may_start)
                may_start = may_start and not container.post_start_pending
        if self.regular and all(self._finished(c, policy) for c in self.regular):
            self._winding_down = True
            for sidecar in (c for c in self.init if c.sidecar and c.alive):
                sidecar.terminate(grace_seconds(pod))

    def _prepared(self, pod: Obj) -> bool:
        if not self.sandbox.ready and time.monotonic() >= self._next_prepare:
            try:
                self.sandbox.prepare(pod)
            except (MountError, ApiException) as exc:
                reason = str(exc) if isinstance(exc, MountError) else f"{exc.status} {exc.reason}"
                message = f"MountVolume.SetUp failed: {reason}"
                self._event("FailedMount", message, warning=True, every=30)
                self._next_prepare = time.monotonic() + RETRY
        return self.sandbox.ready

    def _init_containers(self, pod: Obj, policy: str) -> bool:
        """Run the init containers in order; True once all have done their part."""
        for container in self.init:
            if container.sidecar:
                if self._winding_down:
                    container.poll(self.ctx.backoff_reset)
                    continue
                self._step(pod, container, "Always")
                if not container.started:
                    return False
                continue
            container.poll(self.ctx.backoff_reset)
            if container.succeeded:
                continue
            if container.alive:
                return False
            if container.never_started:
                self._starts.start(pod, container)
            elif policy != "Never":
                self._starts.restart(pod, container)
            return False
        return True

    def _step(self, pod: Obj, container: Container, policy: str, *, may_start: bool = True) -> None:
        container.poll(self.ctx.backoff_reset)
        if container.hook_failure:
            self._event(
                "FailedPostStartHook",
                f"PostStartHook failed: {container.hook_failure}",
                warning=True,
                container=container.name,
            )
            container.hook_failure = None
        if container.alive:
            failed = container.probe_failure()
            if failed and not container.terminating:
                self._event(
                    "Killing",
                    f"Container {container.name} failed {failed} probe, will be restarted",
                    container=container.name,
                )
                container.restart_forced = True
                container.terminate(probe_grace(pod, container, failed))
        elif container.never_started:
            if may_start:
                self._starts.start(pod, container)
        elif should_restart(container, policy):
            self._starts.restart(pod, container)

    def _finished(self, container: Container, policy: str) -> bool:
        """The container ran and will not run again."""
        return (
            not container.alive
            and not container.never_started
            and not should_restart(container, policy)
        )

    # -- stopping --------------------------------------------------------------

    def _terminate(self, pod: Obj) -> bool:
        """One step of graceful termination; True once every process has exited."""
        if self._termination is None:

            def stopping(container: Container) -> None:
                message = f"Stopping container {container.name}"
                self._event("Killing", message, container=container.name)

            self._termination = Termination(
                self.containers, reset_after=self.ctx.backoff_reset, on_stop=stopping
            )
        return self._termination.step(grace_seconds(pod))

    def _finish(self, pod: Obj) -> None:
        """Final status, clean up, and remove the pod from the API."""
        final_states(self.containers)
        self._report(pod, terminal=True)
        self.sandbox.teardown()
        try:
            self.ctx.api.request(
                "DELETE",
                f"/api/v1/namespaces/{self.namespace}/pods/{self.name}",
                body={"gracePeriodSeconds": 0, "preconditions": {"uid": self.uid}},
            )
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise

    def _shutdown(self) -> None:
        for container in self.containers:
            container.terminate(self.ctx.stop_grace)
        deadline = time.monotonic() + self.ctx.stop_grace + 2.0
        while any(c.alive for c in self.containers) and time.monotonic() < deadline:
            time.sleep(0.05)
        for container in self.containers:
            container.kill()

    # -- status ----------------------------------------------------------------

    def _report(self, pod: Obj, terminal: bool = False) -> None:
        status = st.pod_status(
            pod,
            host_ip=self.ctx.host_ip,
            pod_ip=self.sandbox.pod_ip,
            start_time=self.start_time,
            init_statuses=[c.status() for c in self.init],
            statuses=[c.status() for c in self.regular],
            sandbox_ready=self.sandbox.ready,
            terminal=terminal,
            previous_conditions=st.owned_conditions(self._sent or {}),
            now=st.timestamp(),
        )
        if status["phase"] in TERMINAL:
            self._terminal = True
        if status == self._sent:
            return
        try:
            self.ctx.api.request(
                "PATCH",
                f"/api/v1/namespaces/{self.namespace}/pods/{self.name}/status",
                body={"metadata": {"uid": self.uid}, "status": status},
                content_type=MERGE_PATCH,
            )
        except ApiException as exc:
            if exc.status in (409, 422):  # a new pod of the same name, or an invalid status
                log.warning("pod %s/%s: status not written: %s", self.namespace, self.name, exc)
            elif exc.status != 404:  # 404: gone, the watch tells the rest
                raise
        self._sent = status
