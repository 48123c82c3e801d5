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

log = logging.getLogger(__name__)

MAX_BACKOFF = 10.0
WATCH_SECONDS = 60  # the server ends each watch after this; the loop starts the next one
READ_TIMEOUT = 5  # one read afresh (``read``): a retry waits on it, the loop does not


def api_client(kubeconfig: Path | None) -> Any:
    """A kubernetes ApiClient: from a kubeconfig file, or the pod's ServiceAccount
    (``segue.podenv.load_incluster_config``, which maps the token path into the pod)."""
    from kubernetes import client, config

    loader: Any = config.new_client_from_config  # untyped in kubernetes' package
    if kubeconfig is not None:
        return loader(config_file=str(kubeconfig))
    from segue.podenv import load_incluster_config

    return client.ApiClient(load_incluster_config())


class AssignmentWatcher:
    def __init__(
        self,
        api: Any,
        namespace: str,
        name: str,
        on_document: Callable[[AssignmentDocument], None],
        on_error: Callable[[str], None],
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
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
        found = [self._deliver(item) for item in self._list(READ_TIMEOUT).items]
        return max((d.generation for d in found if d is not None), default=None)

    def _list(self, timeout: float) -> Any:
        """The assignment ConfigMap, listed (the list a watch starts from)."""
        from kubernetes import client

        return client.CoreV1Api(self.api).list_namespaced_config_map(
            self.namespace, field_selector=f"metadata.name={self.name}", _request_timeout=timeout
        )

    def _deliver(self, obj: Any) -> AssignmentDocument | None:
        try:
            document = decode_configmap(obj.data, obj.binary_data)
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
        from kubernetes import client
        from kubernetes import watch as k8s_watch
        from kubernetes.client.exceptions import ApiException

        watch: Any = k8s_watch  # untyped in kubernetes' package
        core = client.CoreV1Api(self.api)
        selector = f"metadata.name={self.name}"
        backoff = 0.2
        while not self._stop.is_set():
            try:
                listed = self._list(30)
                self.connected = True
                for item in listed.items:
                    self._deliver(item)
                version = listed.metadata.resource_version if listed.metadata else None
                backoff = 0.2
                while not self._stop.is_set():
                    stream = watch.Watch()
                    for event in stream.stream(
                        core.list_namespaced_config_map,
                        self.namespace,
                        field_selector=selector,
                        resource_version=version,
                        timeout_seconds=WATCH_SECONDS,
                        _request_timeout=WATCH_SECONDS + 15,
                    ):
                        if self._stop.is_set():
                            stream.stop()
                            break
                        kind, obj = event["type"], event["object"]
                        if kind == "ERROR":
                            code = obj.get("code") if isinstance(obj, dict) else None
                            raise ApiException(status=code or 500)
                        version = obj.metadata.resource_version
                        if kind in ("ADDED", "MODIFIED"):
                            self._deliver(obj)
            except ApiException as exc:
                self.connected = False
                if exc.status == 410:
                    log.info("assignment watch expired (410 Gone): listing again")
                    continue
                log.warning("assignment watch failed (%s); retrying in %.1fs", exc.status, backoff)
            except Exception as exc:
                self.connected = False
                log.warning("assignment watch failed (%s); retrying in %.1fs", exc, backoff)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
