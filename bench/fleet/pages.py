"""The workers' side of the fleet benchmark's stub pods: each pod's metrics page.

:mod:`.stubpods` plays the kubelet (binds, runs and deletes the pods) and hands this
module each running pod and every assignment ConfigMap event. :class:`Pages` serves, from
one event loop in its own thread, what a worker would on ``podIP:metricsPort``
(docs/protocol.md): the generation of the app's assignment as soon as a watch delivered
it, and for each task the pod holds in it its role, state ``running`` (active) or
``standby`` (standby, learner), and each store restored to offset 0, the end of the
benchmark's empty changelogs: every learner is caught up at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from segue.protocol import AssignmentDocument, DocumentError, decode_configmap

log = logging.getLogger("bench.fleet.pages")

ASSIGNMENT_SUFFIX = "-assignment"


@dataclass
class Pod:
    name: str
    uid: str
    app: str
    port: int
    ip: str | None = None
    site: web.TCPSite | None = None
    state: str = "new"  # new -> bound -> running -> gone


class Pages:
    """Pods by address, assignments by app, and the one server that shows them."""

    def __init__(self, stores: tuple[str, ...]) -> None:
        self.stores = stores
        self.by_ip: dict[str, Pod] = {}
        self.documents: dict[str, AssignmentDocument] = {}
        self.loop = asyncio.new_event_loop()
        self.runner: web.AppRunner | None = None

    def page(self, ip: str) -> str | None:
        pod = self.by_ip.get(ip)
        if pod is None:
            return None
        document = self.documents.get(pod.app)
        lines = ["segue_worker_ready 1"]
        if document is None:
            return "\n".join(lines) + "\n"
        lines.append(f"segue_assignment_generation {document.generation}")
        roles, _ = document.roles_of(pod.name)
        for task, role in sorted(roles.items()):
            state = "running" if role == "active" else "standby"
            lines.append(f'segue_task_role{{task="{task}",role="{role}"}} 1')
            lines.append(f'segue_task_state{{task="{task}",state="{state}"}} 1')
            lines.append(f'segue_task_lag{{task="{task}"}} 0')
            for store in self.stores:
                lines.append(f'segue_task_restored_offset{{task="{task}",store="{store}"}} 0')
        return "\n".join(lines) + "\n"

    def handle_configmap(self, kind: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if not name.endswith(ASSIGNMENT_SUFFIX):
            return
        app = name[: -len(ASSIGNMENT_SUFFIX)]
        if kind == "DELETED":
            self.documents.pop(app, None)
            return
        try:
            self.documents[app] = decode_configmap(obj.get("data"), obj.get("binaryData"))
        except DocumentError as exc:
            log.warning("%s: unreadable assignment: %s", app, exc)

    # -- serving: the methods below are called from the kubelet's threads --

    def start(self) -> None:
        self.loop.run_until_complete(self._setup())
        threading.Thread(target=self.loop.run_forever, name="stub-http", daemon=True).start()

    def open(self, pod: Pod) -> None:
        """Serve ``pod`` (its ``ip`` taken) from now on."""
        self._in_loop(self._open(pod))
        assert pod.ip is not None
        self.by_ip[pod.ip] = pod

    def close(self, pod: Pod) -> None:
        if pod.ip is not None:
            self.by_ip.pop(pod.ip, None)
        if pod.site is not None:
            self._in_loop(pod.site.stop())
            pod.site = None

    async def _serve(self, request: web.Request) -> web.Response:
        sock = request.transport.get_extra_info("sockname") if request.transport else None
        page = self.page(sock[0]) if sock else None
        if page is None or request.path != "/metrics":
            return web.Response(status=404)
        return web.Response(text=page, content_type="text/plain")

    async def _setup(self) -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._serve)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()

    async def _open(self, pod: Pod) -> None:
        assert self.runner is not None
        assert pod.ip is not None
        site = web.TCPSite(self.runner, pod.ip, pod.port, reuse_address=True)
        await site.start()
        pod.site = site

    def _in_loop(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)
