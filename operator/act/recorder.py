"""Kubernetes Events about a StreamApp (``kubectl describe sapp`` shows them), aggregated.

An event said again for the same object, type and reason bumps one Event object's
``count`` and ``lastTimestamp`` (and carries the latest message), as client-go's
recorder does and kubectl users expect ("x5 over 20s"), instead of adding an object
each time. The Event's name is derived from that key, so a restarted operator finds
and bumps the same object. Posted with the core/v1 API directly rather than Kopf's
event queue, because the operator's loop runs in a thread of its own. A failed post
is logged, never fatal: events are for humans.
"""

from __future__ import annotations

import hashlib
import logging
import socket
import threading
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.operator.api import API_VERSION, KIND
from segue.operator.api.status import to_timestamp

# The client's typed stubs want model objects; it accepts plain dicts, which we build.
Api = Any

log = logging.getLogger("segue.operator.events")
COMPONENT = "segue-operator"
MAX_MESSAGE = 1024


@dataclass(frozen=True)
class Involved:
    """The StreamApp an event is about."""

    namespace: str
    name: str
    uid: str


def event_name(involved: Involved, type_: str, reason: str) -> str:
    digest = hashlib.sha256(f"{involved.uid}/{type_}/{reason}".encode()).hexdigest()[:16]
    return f"{involved.name}.{digest}"


class EventRecorder:
    """One aggregated Event object per (StreamApp, type, reason)."""

    def __init__(self, core: Api) -> None:
        self.core = core
        self._counts: dict[tuple[str, str], int] = {}  # (namespace, name) -> count written
        self._lock = threading.Lock()
        self._instance = socket.gethostname()[:128]

    def post(
        self, involved: Involved, *, type_: str, reason: str, message: str, now: float
    ) -> None:
        key = (involved.namespace, event_name(involved, type_, reason))
        with self._lock:
            known = self._counts.get(key)
        fields = {"message": message[:MAX_MESSAGE], "lastTimestamp": to_timestamp(now)}
        try:
            count = self._bump(key, known + 1, fields) if known else None
            if count is None:
                count = self._create(involved, key[1], type_, reason, fields)
        except ApiException as exc:
            log.warning(
                "could not post event %s for %s/%s: %s",
                reason,
                involved.namespace,
                involved.name,
                exc.reason,
            )
            return
        with self._lock:
            self._counts[key] = count

    def forget(self, namespace: str, name: str) -> None:
        """The StreamApp is gone: drop what is remembered of its events."""
        with self._lock:
            for key in [
                k for k in self._counts if k[0] == namespace and k[1].startswith(f"{name}.")
            ]:
                del self._counts[key]

    def _create(
        self, involved: Involved, name: str, type_: str, reason: str, fields: dict[str, Any]
    ) -> int:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": involved.namespace},
            "involvedObject": {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "name": involved.name,
                "namespace": involved.namespace,
                "uid": involved.uid,
            },
            "type": type_,
            "reason": reason,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": self._instance,
            "firstTimestamp": fields["lastTimestamp"],
            "count": 1,
            **fields,
        }
        try:
            self.core.create_namespaced_event(involved.namespace, body)
            return 1
        except ApiException as exc:
            if exc.status != 409:
                raise
        # Said before by an earlier run of the operator: bump that one.
        existing = self.core.read_namespaced_event(name, involved.namespace)
        count = self._bump((involved.namespace, name), (existing.count or 1) + 1, fields)
        return count or self._create(involved, name, type_, reason, fields)

    def _bump(self, key: tuple[str, str], count: int, fields: dict[str, Any]) -> int | None:
        """The new count, or None if the Event is gone (events expire, an hour by default)."""
        try:
            self.core.patch_namespaced_event(key[1], key[0], {"count": count, **fields})
        except ApiException as exc:
            if exc.status != 404:
                raise
            return None
        return count
