"""Follow the assignment ConfigMap: one read, then a watch, forever.

Least privilege (docs/protocol.md): the worker only ever lists and watches
``configmaps`` with ``fieldSelector=metadata.name=<app>-assignment`` in its own
namespace, which a Role restricted by ``resourceNames`` allows. The thread
re-lists on ``410 Gone``, reconnects with capped backoff on any error, and hands
each decoded document to ``runtime`` (which ignores generations it has already
applied). While the API server is away nothing is delivered, and the worker
keeps running its last generation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from segue.protocol import AssignmentDocument, DocumentError, UnsupportedVersion, decode_configmap
from segue.protocol.reports import AssignmentErrorReason
from segue.worker import kubeapi
from segue.worker.kubeapi import Endpoint

log = logging.getLogger(__name__)

MAX_BACKOFF = 10.0
WATCH_SECONDS = 60  # the server ends each watch after this; the loop starts the next one
READ_TIMEOUT = 5  # one read afresh (``read``): a retry waits on it, the loop does not


def endpoint(kubeconfig: Path | None) -> Endpoint:
    """Where the assignment is read from: a kubeconfig's cluster, or the pod's own
    ServiceAccount (``kubeapi``)."""
    return kubeapi.in_cluster() if kubeconfig is None else kubeapi.from_kubeconfig(kubeconfig)


class AssignmentWatcher:
    def __init__(
        self,
        api: Endpoint,
        namespace: str,
        name: str,
        on_document: Callable[[AssignmentDocument], None],
        on_error: Callable[[str], None],
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.configmaps = kubeapi.ConfigMaps(api, namespace, f"metadata.name={name}")
        self.on_document = on_document
        self.on_error = on_error
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="segue-assignment", daemon=True)
        self.connected = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def read(self) -> int | None:
        """One list of the assignment, delivered like the watch's: the generation read
        (None: no ConfigMap, or one that does not decode). ``freshness`` calls it."""
        items, _ = self.configmaps.list(READ_TIMEOUT)
        found = [self._deliver(item) for item in items]
        return max((d.generation for d in found if d is not None), default=None)

    def _deliver(self, obj: dict[str, Any]) -> AssignmentDocument | None:
        try:
            document = decode_configmap(obj.get("data"), obj.get("binaryData"))
        except UnsupportedVersion as exc:
            log.error(
                "assignment %s/%s: %s; keeping the last generation applied",
                self.namespace,
                self.name,
                exc,
            )
            self.on_error(AssignmentErrorReason.UNSUPPORTED_VERSION)
            return None
        except DocumentError as exc:
            log.error("assignment %s/%s is invalid: %s", self.namespace, self.name, exc)
            self.on_error(AssignmentErrorReason.INVALID_DOCUMENT)
            return None
        self.on_document(document)
        return document

    def _run(self) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                items, version = self.configmaps.list(30)
                self.connected = True
                for item in items:
                    self._deliver(item)
                backoff = 0.2
                while not self._stop.is_set():
                    for kind, obj in self.configmaps.watch(version, WATCH_SECONDS):
                        if self._stop.is_set():
                            break
                        version = (obj.get("metadata") or {}).get("resourceVersion", version)
                        if kind in ("ADDED", "MODIFIED"):
                            self._deliver(obj)
            except kubeapi.ApiError as exc:
                self.connected = False
                if exc.status == 410:
                    log.info("assignment watch expired (410 Gone): listing again")
                    continue
                log.warning("assignment watch failed (%s); retrying in %.1fs", exc, backoff)
            except Exception as exc:
                self.connected = False
                log.warning("assignment watch failed (%s); retrying in %.1fs", exc, backoff)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
