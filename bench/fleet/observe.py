"""What the fleet benchmark reads while it runs: every app's published generation and
status, each from one watch, and a process's CPU ticks and resident memory.

Generations come from the assignment ConfigMaps (``data.generation``, what the operator
publishes, ``act.apply.publish``) and are stamped with the time their watch event
arrived, so a scale's latency is measured to the moment a watcher (a worker) could see it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from segue.protocol.names import MANAGED_BY, MANAGER

log = logging.getLogger("bench.fleet")

ASSIGNMENT_SUFFIX = "-assignment"


@dataclass(frozen=True)
class Published:
    generation: int
    seen: float  # time.time() the watch delivered it


class FleetView:
    """Generations and statuses of one namespace's StreamApps, kept current by watches."""

    def __init__(self, api: Any, namespace: str) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.namespace = namespace
        self.lock = threading.Condition()
        self.generations: dict[str, Published] = {}
        self.statuses: dict[str, dict[str, Any]] = {}
        self.replicas: dict[str, int] = {}

    def start(self) -> None:
        for target in (self._watch_configmaps, self._watch_apps):
            threading.Thread(target=target, daemon=True, name=target.__name__).start()

    def generation(self, app: str) -> int:
        with self.lock:
            seen = self.generations.get(app)
            return seen.generation if seen else -1

    def balanced(self, app: str) -> bool:
        """Balanced True for the app's current spec, and a generation published."""
        with self.lock:
            status = self.statuses.get(app) or {}
            conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
            return conditions.get("Balanced") == "True" and app in self.generations

    def wait_generation(self, app: str, above: int, timeout: float) -> Published | None:
        """The first generation of ``app`` above ``above``, once a watch delivers it."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                seen = self.generations.get(app)
                if seen is not None and seen.generation > above:
                    return seen
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def _on_configmap(self, kind: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if not name.endswith(ASSIGNMENT_SUFFIX) or kind == "DELETED":
            return
        app = name[: -len(ASSIGNMENT_SUFFIX)]
        generation = int((obj.get("data") or {}).get("generation", -1))
        with self.lock:
            known = self.generations.get(app)
            if known is None or generation > known.generation:
                self.generations[app] = Published(generation, time.time())
                self.lock.notify_all()

    def _on_app(self, kind: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        with self.lock:
            if kind == "DELETED":
                self.statuses.pop(name, None)
                return
            self.statuses[name] = obj.get("status") or {}
            self.replicas[name] = int((obj.get("spec") or {}).get("replicas", 0))
            self.lock.notify_all()

    def _watch_configmaps(self) -> None:
        def listing(**kw: Any) -> Any:
            return self.core.list_namespaced_config_map(
                self.namespace, label_selector=f"{MANAGED_BY}={MANAGER}", **kw
            )

        follow(listing, self._on_configmap)

    def _watch_apps(self) -> None:
        from segue.operator.api import GROUP, PLURAL, VERSION

        def listing(**kw: Any) -> Any:
            return self.custom.list_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, **kw
            )

        follow(listing, self._on_app)


def follow(listing: Callable[..., Any], handle: Callable[[str, dict[str, Any]], None]) -> None:
    """List then watch, forever; relist on any error."""
    from kubernetes import watch

    while True:
        try:
            body = json.loads(listing(_preload_content=False).data)
            for item in body["items"]:
                handle("ADDED", item)
            stream = watch.Watch().stream(
                listing,
                resource_version=body["metadata"]["resourceVersion"],
                timeout_seconds=300,
                _preload_content=False,
            )
            for event in stream:
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    handle(event["type"], event["raw_object"])
        except Exception as exc:
            log.debug("watch ended (%s); relisting", exc)
            time.sleep(0.5)


HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)
