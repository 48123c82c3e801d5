"""A list+watch loop that survives anything the apiserver or the network does.

:class:`Watcher` lists a collection, hands the whole list to ``on_sync``, then
watches from the list's resourceVersion and hands each event to ``on_event``.
It relists at once on 410 Gone, after a back-off on any other error, and every
``resync`` seconds anyway, so a missed event is repaired within that period.
``runner`` watches pods with one, ``claims`` watches PersistentVolumeClaims
with another; both handlers are idempotent, so seeing an object twice is safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from segue.stack.kubelet.api import Api

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class _Gone(Exception):
    """The watch's resourceVersion is too old: relist."""


class Watcher:
    def __init__(
        self,
        api: Api,
        path: str,
        *,
        on_sync: Callable[[list[Obj]], None],
        on_event: Callable[[str, Obj], None],
        resync: float = 60.0,
        name: str = "watch",
    ) -> None:
        self.api = api
        self.path = path
        self.on_sync = on_sync
        self.on_event = on_event
        self.resync = resync
        self.synced = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        deadline = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < deadline:
            self.api.abort(self.path)  # again, in case a watch was just opening
            self._thread.join(0.2)

    def _run(self) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                self._list_and_watch()
                backoff = 0.5
            except _Gone:
                log.info("%s: resourceVersion expired, relisting", self.path)
            except Exception as exc:
                if self._stop.is_set():
                    return
                log.warning("%s: watch failed (%s), relisting in %.1fs", self.path, exc, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)

    def _list_and_watch(self) -> None:
        listed = self.api.request("GET", self.path)
        version = str(listed["metadata"]["resourceVersion"])
        self.on_sync(list(listed.get("items") or []))
        self.synced.set()
        until = time.monotonic() + self.resync
        while not self._stop.is_set() and time.monotonic() < until:
            query = {
                "resourceVersion": version,
                "allowWatchBookmarks": True,
                "timeoutSeconds": max(int(until - time.monotonic()), 1),
            }
            for event in self.api.watch(self.path, query, tag=self.path):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise _Gone()
                    raise RuntimeError(f"watch error: {obj.get('message')}")
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind == "BOOKMARK":
                    continue
                try:
                    self.on_event(str(kind), obj)
                except Exception:
                    log.exception("%s: handling a %s event failed", self.path, kind)
                if self._stop.is_set():
                    return
