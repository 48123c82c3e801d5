"""The pod runner: a Node, a scheduler for it, and a kubelet for its pods.

:class:`PodRunner` registers its Node (``node``), then watches every pod
(``watch.Watcher``): a pending pod for the default scheduler whose nodeSelector
the node satisfies is bound to the node through the ``pods/binding``
subresource; a pod bound to the node gets a ``supervisor.PodSupervisor`` (one
per pod UID, so handling is idempotent) that receives each new version of it;
a pod that disappears from the API has its supervisor kill its processes. A
second watch keeps PersistentVolumeClaims' directories (``claims``); ``logs``
serves the kubelet's ``containerLogs`` endpoint for ``kubectl logs``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.stack.kubelet import ipam
from segue.stack.kubelet.api import STRATEGIC_PATCH, Api
from segue.stack.kubelet.claims import ClaimManager
from segue.stack.kubelet.context import NodeContext
from segue.stack.kubelet.events import EventRecorder
from segue.stack.kubelet.image import image_env
from segue.stack.kubelet.logs import KubeletLogServer
from segue.stack.kubelet.node import capacity, register_node
from segue.stack.kubelet.podspec import instance_name
from segue.stack.kubelet.supervisor import PodSupervisor
from segue.stack.kubelet.watch import Watcher

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class PodRunner:
    """Plays the kubelet (and the scheduler) for one Node on this machine.

    Restarts back off like the kubelet's (immediately, then ``backoff_base``
    seconds doubling up to ``backoff_cap``; the kubelet's are 10 s and 300 s,
    too slow for tests). ``resync`` is how often the watches relist;
    ``stop_grace`` how long :meth:`stop` waits after SIGTERM before SIGKILL;
    ``content_refresh`` how often configMap/secret/downwardAPI volumes are
    rewritten; ``provision_volumes`` creates a PersistentVolume for each
    pending claim.

    ``env_overrides[(namespace, pod)]``: variables the runner sets over that pod's
    containers' own at each start, the one place a test may make one pod differ from
    its siblings. Pods here share the machine's network, so a pod that must reach a
    server by another route than its siblings (the network fault's proxy,
    tests/faults/test_network.py) is given that route's address this way, as a node
    with its own path to the server would give it one. The pod object is not changed.
    """

    def __init__(
        self,
        *,
        kubeconfig: Path,
        root: Path,
        apiserver_host: str,
        apiserver_port: int,
        ca_file: Path,
        node_name: str = "segue-local",
        host_ip: str = "127.0.0.1",
        backoff_base: float = 1.0,
        backoff_cap: float = 10.0,
        resync: float = 30.0,
        stop_grace: float = 5.0,
        content_refresh: float = 15.0,
        provision_volumes: bool = True,
    ) -> None:
        self.kubeconfig = Path(kubeconfig)
        self.root = Path(root)
        self.node_name = node_name
        self.host_ip = host_ip
        self.ca_file = Path(ca_file)
        self._settings = {
            "apiserver_host": apiserver_host,
            "apiserver_port": int(apiserver_port),
            "ca_file": Path(ca_file),
            "backoff_base": backoff_base,
            "backoff_cap": backoff_cap,
            "stop_grace": stop_grace,
            "content_refresh": content_refresh,
        }
        self.resync = resync
        self.provision_volumes = provision_volumes
        self.ctx: NodeContext | None = None
        self._pods: dict[str, PodSupervisor] = {}
        self._unschedulable: set[str] = set()
        self._lock = threading.Lock()
        self._watcher: Watcher | None = None
        self._logs: KubeletLogServer | None = None
        self.env_overrides: dict[tuple[str, str], dict[str, str]] = {}

    # -- lifecycle -----------------------------------------------------------

    def start(self, timeout: float = 60.0) -> None:
        """Register the Node and start watching; returns once the first list is handled."""
        api = Api(self.kubeconfig)
        self.root.mkdir(parents=True, exist_ok=True)
        resources = capacity(self.root)
        pki = self.root / "kubelet-pki"
        self._logs = KubeletLogServer(self.root / "pods", pki, self.ca_file, self.host_ip).start()
        register_node(api, self.node_name, self.host_ip, resources, self._logs.port)
        events = EventRecorder(api, self.node_name)
        claims = ClaimManager(
            api,
            self.root / "claims",
            self.node_name,
            provision=self.provision_volumes,
            resync=self.resync,
        )
        self.ctx = NodeContext(
            api=api,
            node_name=self.node_name,
            host_ip=self.host_ip,
            pods_root=self.root / "pods",
            claims=claims,
            events=events,
            ipam=ipam.choose(),
            base_env=image_env(os.environ, sys.executable),
            allocatable=resources,
            overrides=self.env_overrides,
            **self._settings,  # type: ignore[arg-type]
        )
        events.start()
        claims.start()
        self._watcher = Watcher(
            api,
            "/api/v1/pods",
            on_sync=self._sync,
            on_event=self._event,
            resync=self.resync,
            name="pod-runner-pods",
        )
        self._watcher.start()
        if not (self._watcher.synced.wait(timeout) and claims.watcher.synced.wait(timeout)):
            self.stop()
            raise RuntimeError(f"the pod runner could not list pods within {timeout:.0f}s")

    def stop(self) -> None:
        """SIGTERM every pod's processes, SIGKILL what remains after ``stop_grace``;
        pods stay in the API."""
        if self.ctx is None:
            return
        ctx, self.ctx = self.ctx, None
        if self._watcher is not None:
            self._watcher.stop()
        ctx.claims.stop()
        with self._lock:
            supervisors = list(self._pods.values())
            self._pods.clear()
            self._unschedulable.clear()
        for supervisor in supervisors:
            supervisor.stop()
        for supervisor in supervisors:
            supervisor.join(ctx.stop_grace + 10.0)
        ctx.events.stop()
        ctx.api.close()
        ctx.ipam.release_all()  # a pod a supervisor did not see out keeps none
        if self._logs is not None:
            self._logs.stop()
            self._logs = None

    # -- helpers for tests and the demo ----------------------------------------

    @property
    def kubelet_port(self) -> int:
        """The port of the ``containerLogs`` endpoint, as the Node publishes it."""
        assert self._logs is not None, "the runner is not started"
        return self._logs.port

    def pod_dir(self, namespace: str, name: str, uid: str) -> Path:
        """Where a pod instance's rootfs/, volumes/, home/ and logs/ are."""
        return self.root / "pods" / instance_name(namespace, name, uid)

    def log_path(self, namespace: str, name: str, uid: str, container: str) -> Path | None:
        """The newest log file of a container (``logs/<container>/<restart>.log``)."""
        logs = sorted(
            (self.pod_dir(namespace, name, uid) / "logs" / container).glob("*.log"),
            key=lambda p: int(p.stem),
        )
        return logs[-1] if logs else None

    def claim_dir(self, namespace: str, claim: str) -> Path | None:
        """The directory of the live claim of that name, if it has one."""
        found = sorted((self.root / "claims").glob(f"{namespace}_{claim}_*"), key=os.path.getmtime)
        return found[-1] if found else None

    # -- the watch -------------------------------------------------------------

    def _sync(self, pods: list[Obj]) -> None:
        listed = {p["metadata"]["uid"] for p in pods}
        with self._lock:
            missing = [s for uid, s in self._pods.items() if uid not in listed]
            for supervisor in missing:
                del self._pods[supervisor.uid]
        for supervisor in missing:
            supervisor.gone()
        for pod in pods:
            self._handle(pod)

    def _event(self, kind: str, pod: Obj) -> None:
        if kind == "DELETED":
            with self._lock:
                supervisor = self._pods.pop(pod["metadata"]["uid"], None)
            if supervisor is not None:
                supervisor.gone()
            return
        self._handle(pod)

    def _handle(self, pod: Obj) -> None:
        ctx = self.ctx
        if ctx is None:
            return
        meta, spec = pod["metadata"], pod.get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            self._schedule(ctx, pod)
            return
        if node != self.node_name:
            return
        uid = meta["uid"]
        with self._lock:
            supervisor = self._pods.get(uid)
            if supervisor is None:
                phase = (pod.get("status") or {}).get("phase")
                if phase in ("Succeeded", "Failed") and not meta.get("deletionTimestamp"):
                    return  # finished before this runner saw it: nothing to run
                supervisor = self._pods[uid] = PodSupervisor(pod, ctx)
                supervisor.start()
                return
        supervisor.update(pod)

    def _schedule(self, ctx: NodeContext, pod: Obj) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if (
            meta.get("deletionTimestamp")
            or spec.get("schedulerName", "default-scheduler") != "default-scheduler"
        ):
            return
        if (pod.get("status") or {}).get("phase", "Pending") != "Pending":
            return
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        selector = spec.get("nodeSelector") or {}
        labels = {"kubernetes.io/hostname": self.node_name, "kubernetes.io/os": "linux"}
        if any(labels.get(k) != v for k, v in selector.items()):
            if meta["uid"] not in self._unschedulable:
                self._unschedulable.add(meta["uid"])
                message = (
                    "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
                )
                ctx.events.pod_event(
                    pod, "FailedScheduling", message, warning=True, component="default-scheduler"
                )
                condition = {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
                try:
                    ctx.api.request(
                        "PATCH",
                        f"{path}/status",
                        body={"status": {"conditions": [condition]}},
                        content_type=STRATEGIC_PATCH,
                    )
                except ApiException as exc:
                    log.debug("could not mark %s unschedulable: %s", path, exc.reason)
            return
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.node_name},
        }
        try:
            ctx.api.request("POST", f"{path}/binding", body=binding)
        except ApiException as exc:
            if exc.status not in (404, 409):  # gone, or already bound
                log.warning("could not bind %s: %s", path, exc)
            return
        ctx.events.pod_event(
            pod,
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {self.node_name}",
            component="default-scheduler",
        )
