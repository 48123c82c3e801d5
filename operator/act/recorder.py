"""Kubernetes Events about a StreamApp (``kubectl describe sapp`` shows them).

Posted with the core/v1 API directly rather than Kopf's event queue, because the
operator's loop runs in a thread of its own and must know an event was written before
it moves on. A failed post is logged, never fatal: events are for humans.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
import uuid
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.operator.api import API_VERSION, KIND

# The client's typed stubs want model objects; it accepts plain dicts, which we build.
Api = Any

log = logging.getLogger("segue.operator.events")
COMPONENT = "segue-operator"
MAX_MESSAGE = 1024


def post(
    core: Api, namespace: str, app: str, uid: str, *, type_: str, reason: str, message: str
) -> None:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{app}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": app,
            "namespace": namespace,
            "uid": uid,
        },
        "type": type_,
        "reason": reason,
        "message": message[:MAX_MESSAGE],
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": socket.gethostname()[:128],
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    try:
        core.create_namespaced_event(namespace, body)
    except ApiException as exc:
        log.warning("could not post event %s for %s/%s: %s", reason, namespace, app, exc.reason)
