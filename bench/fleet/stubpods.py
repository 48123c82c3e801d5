"""Stub pods for the fleet benchmark: one process plays the kubelet and every worker.

2,000 real workers (500 apps x 4 pods) do not fit on a 2-core machine, and the fleet
benchmark measures the operator, not the data plane. So the pods the operator creates are
real API objects, but nothing runs in them. This process, for one namespace:

- registers a Node and binds each new pod of a StreamApp to it (``pods/binding``), gives it
  an address 127.1.x.y and writes its status Running and Ready, as a kubelet would;
- serves the worker's metrics contract for every pod (:mod:`.pages`, from the assignment
  ConfigMaps this process watches): every learner is caught up at once;
- on a pod's ``deletionTimestamp`` stops serving it and deletes it with grace period 0.

What this does not model: a worker's time to apply a generation, restore, fence, or start
(a real pod takes seconds to start; here it reports on the operator's next look). So the
benchmark's scale -> generation time is the operator's own latency plus the API server's.
"""

from __future__ import annotations

import argparse
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from segue.protocol.names import APP_LABEL, MANAGED_BY, MANAGER

from .pages import Pages, Pod

log = logging.getLogger("bench.fleet.stubpods")

NODE = "fleet-stub"
WRITERS = 32  # API writes in flight: a fleet's pods start within seconds
SELECTOR = f"{MANAGED_BY}={MANAGER}"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Addresses:
    """127.1.0.1 .. 127.1.255.250, handed out lowest first and reused once freed."""

    def __init__(self) -> None:
        self._free = [f"127.1.{i // 250}.{i % 250 + 1}" for i in range(256 * 250)]
        self._free.reverse()

    def take(self) -> str:
        return self._free.pop()

    def give(self, ip: str) -> None:
        self._free.append(ip)


class StubPods:
    def __init__(self, api_client: Any, namespace: str, stores: tuple[str, ...]) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.namespace = namespace
        self.pages = Pages(stores)
        self.pods: dict[str, Pod] = {}  # uid -> pod
        self.addresses = Addresses()
        self.writes = ThreadPoolExecutor(WRITERS, thread_name_prefix="stub-write")
        self.events: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.started = 0

    # -- the kubelet's part --

    def register_node(self) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        node = client.V1Node(
            metadata=client.V1ObjectMeta(name=NODE, labels={"kubernetes.io/hostname": NODE})
        )
        try:
            self.core.create_node(node)
        except ApiException as exc:
            if exc.status != 409:
                raise

    def handle_pod(self, kind: str, obj: dict[str, Any]) -> None:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        uid, name = meta["uid"], meta["name"]
        app = (meta.get("labels") or {}).get(APP_LABEL)
        if not app:
            return
        pod = self.pods.get(uid)
        if kind == "DELETED" or meta.get("deletionTimestamp"):
            if pod is not None and pod.state != "gone":
                pod.state = "gone"
                self._forget(pod)
                self.writes.submit(self._delete, pod)
            return
        if pod is None:
            ports = [p for c in spec.get("containers", []) for p in c.get("ports") or []]
            port = next((p["containerPort"] for p in ports if p.get("name") == "metrics"), 0)
            port = port or next((p["containerPort"] for p in ports), 9400)
            pod = self.pods[uid] = Pod(name, uid, app, port)
        if pod.state == "new":
            pod.state = "bound"
            if not spec.get("nodeName"):
                self.writes.submit(self._bind, pod)
            else:
                self.writes.submit(self._run, pod, spec)
        elif (
            pod.state == "bound"
            and spec.get("nodeName")
            and not (obj.get("status") or {}).get("podIP")
        ):
            pod.state = "starting"
            self.writes.submit(self._run, pod, spec)

    def _forget(self, pod: Pod) -> None:
        if pod.ip is not None:
            self.pages.close(pod)
            self.addresses.give(pod.ip)
            pod.ip = None

    def _bind(self, pod: Pod) -> None:
        from kubernetes import client

        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name=pod.name),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=NODE),
        )
        self._try(
            "bind",
            pod,
            lambda: _read(
                self.core.create_namespaced_pod_binding(
                    pod.name, self.namespace, body, _preload_content=False
                )
            ),
        )

    def _run(self, pod: Pod, spec: dict[str, Any]) -> None:
        if pod.state == "gone" or pod.ip is not None:
            return
        pod.ip = self.addresses.take()
        self.pages.open(pod)
        stamp = now_rfc3339()
        containers = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": stamp}},
            }
            for c in spec.get("containers", [])
        ]
        status = {
            "phase": "Running",
            "hostIP": "127.0.0.1",
            "podIP": pod.ip,
            "podIPs": [{"ip": pod.ip}],
            "startTime": stamp,
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": stamp}
                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
            "containerStatuses": containers,
        }
        pod.state = "running"
        self.started += 1
        self._try(
            "status",
            pod,
            lambda: self.core.patch_namespaced_pod_status(
                pod.name, self.namespace, {"status": status}
            ),
        )

    def _delete(self, pod: Pod) -> None:
        from kubernetes import client

        options = client.V1DeleteOptions(
            grace_period_seconds=0, preconditions=client.V1Preconditions(uid=pod.uid)
        )
        self._try(
            "delete",
            pod,
            lambda: self.core.delete_namespaced_pod(pod.name, self.namespace, body=options),
        )
        self.pods.pop(pod.uid, None)

    def _try(self, what: str, pod: Pod, call: Callable[[], Any]) -> None:
        from kubernetes.client.exceptions import ApiException

        try:
            call()
        except ApiException as exc:
            if exc.status not in (404, 409):
                log.warning("%s %s: %s %s", what, pod.name, exc.status, exc.reason)
        except Exception:
            log.exception("%s %s failed", what, pod.name)

    # -- watching --

    def watch(
        self, list_call: Callable[..., Any], handle: Callable[[str, dict[str, Any]], None]
    ) -> None:
        """List, then watch from the list's resourceVersion; relist on any error."""
        from kubernetes import watch

        while True:
            try:
                listed = list_call(self.namespace, label_selector=SELECTOR, _preload_content=False)
                body = json.loads(listed.data)
                for item in body["items"]:
                    self.events.put((handle.__name__, {"type": "ADDED", "object": item}))
                version = body["metadata"]["resourceVersion"]
                stream = watch.Watch().stream(
                    list_call,
                    self.namespace,
                    label_selector=SELECTOR,
                    resource_version=version,
                    timeout_seconds=300,
                    allow_watch_bookmarks=True,
                    _preload_content=False,
                )
                for event in stream:
                    if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                        self.events.put((handle.__name__, {**event, "object": event["raw_object"]}))
            except Exception as exc:  # relist
                log.info("watch ended (%s); relisting", exc)
                time.sleep(0.5)

    def run(self) -> None:
        self.pages.start()
        self.register_node()
        handlers = {"handle_pod": self.handle_pod, "handle_configmap": self.pages.handle_configmap}
        for call, handle in (
            (self.core.list_namespaced_pod, self.handle_pod),
            (self.core.list_namespaced_config_map, self.pages.handle_configmap),
        ):
            threading.Thread(target=self.watch, args=(call, handle), daemon=True).start()
        last = time.monotonic()
        while True:
            try:
                which, event = self.events.get(timeout=10)
            except queue.Empty:
                which = ""
            if which:
                try:
                    handlers[which](event["type"], event["object"])
                except Exception:
                    log.exception("handling a %s event failed", which)
            if time.monotonic() - last > 10:
                last = time.monotonic()
                log.info(
                    "serving %d pods, %d assignments",
                    len(self.pages.by_ip),
                    len(self.pages.documents),
                )


def _read(response: Any) -> Any:
    """The body of a ``_preload_content=False`` answer: read, so its connection goes back
    to the pool."""
    return response.data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fleet.stubpods",
        description="Play the kubelet and every worker of one namespace's StreamApps "
        "(bench/fleet): bind and run their pods as stubs that serve the worker's metrics.",
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--store", action="append", default=[], help="store name (repeatable)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=args.kubeconfig, client_configuration=configuration)
    configuration.connection_pool_maxsize = WRITERS + 4  # the writers and the watches
    api = client.ApiClient(configuration)
    StubPods(api, args.namespace, tuple(args.store)).run()


if __name__ == "__main__":
    main()
