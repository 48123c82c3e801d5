"""Kubernetes Events about pods, as a kubelet (and a scheduler) records them.

Scheduled, Started, Killing, BackOff, Unhealthy, FailedMount, Failed: enough for
``kubectl describe pod`` and an operator's event watch to tell the story. Events
are sent from a queue on one thread, best effort: an event that cannot be
written (its namespace is being deleted, say) is dropped, never retried, and
never slows a pod down.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from typing import Any

from segue.stack.kubelet.api import Api
from segue.stack.kubelet.status import timestamp

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class EventRecorder:
    def __init__(self, api: Api, node_name: str) -> None:
        self.api = api
        self.node_name = node_name
        self._queue: queue.Queue[Obj | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="pod-runner-events", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def pod_event(
        self,
        pod: Obj,
        reason: str,
        message: str,
        *,
        warning: bool = False,
        container: str | None = None,
        component: str = "kubelet",
    ) -> None:
        meta = pod["metadata"]
        involved: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
        }
        if container:
            kind = (
                "initContainers"
                if any(
                    c["name"] == container
                    for c in (pod.get("spec") or {}).get("initContainers") or []
                )
                else "containers"
            )
            involved["fieldPath"] = f"spec.{kind}{{{container}}}"
        now = timestamp()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{time.time_ns():x}{uuid.uuid4().hex[:4]}",
                "namespace": meta["namespace"],
            },
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": "Warning" if warning else "Normal",
            "source": {"component": component, "host": self.node_name},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": component,
            "reportingInstance": self.node_name,
        }
        self._queue.put(event)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            namespace = event["metadata"]["namespace"]
            try:
                self.api.request(
                    "POST", f"/api/v1/namespaces/{namespace}/events", body=event, timeout=5
                )
            except Exception as exc:
                log.debug("event %s dropped: %s", event["reason"], exc)
