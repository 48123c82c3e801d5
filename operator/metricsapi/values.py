"""What the external metrics API answers, as plain data: no I/O, no clock.

An HPA's ``External`` metric names one of :data:`METRICS` and selects the StreamApp
with ``labelSelector: segue.dev/app=<name>`` (:data:`~segue.protocol.names.APP_LABEL`,
the label every object of the app carries). The value is read from the app's
:class:`~segue.operator.autoscale.AppSignal` and written as a Kubernetes quantity in
thousandths (``"1500m"``), the resolution the HPA computes with. A quantity cannot be
infinite, so "never catches up" (``inf``) is :data:`NEVER`, a finite value far above
any sensible target: an HPA that reads it scales to its ``maxReplicas``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

from segue.operator.autoscale import AppSignal
from segue.protocol.names import APP_LABEL

GROUP = "external.metrics.k8s.io"
VERSION = "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
NEVER = 1_000_000_000.0  # what inf is served as: 10^9 (seconds: ~32 years)

# metric name -> how to read it from an app's signal
METRICS: dict[str, Callable[[AppSignal], float]] = {
    # the one to scale on (AverageValue 1): pods the input needs, learners not counted
    "segue-replicas-needed": lambda s: s.replicas_needed,
    "segue-seconds-to-catch-up": lambda s: s.seconds_to_catch_up,
    "segue-projected-seconds-to-catch-up": lambda s: s.projected_seconds_to_catch_up,
    "segue-lag-records": lambda s: float(s.lag_records),
    "segue-lag-per-replica": lambda s: s.lag_per_replica,
}


class Refusal(Exception):
    """An answer other than a value: HTTP ``code`` with a Status ``reason`` and message."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def quantity(value: float) -> str:
    """``value`` as a quantity in thousandths; ``inf`` as :data:`NEVER`, below 0 as 0."""
    if math.isnan(value):
        raise Refusal(503, "ServiceUnavailable", "the value is not known yet (NaN)")
    clamped = min(max(value, 0.0), NEVER)
    milli = round(clamped * 1000)
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def app_of(selector: str | None) -> str:
    """The StreamApp a ``labelSelector`` names: exactly ``segue.dev/app=<name>``
    (``==`` too). Any other requirement is refused, not ignored: an HPA's selector
    that asks for more than the provider can honour should say so."""
    if not selector:
        raise Refusal(400, "BadRequest", f"labelSelector {APP_LABEL}=<StreamApp name> is required")
    apps: list[str] = []
    for requirement in (r.strip() for r in selector.split(",")):
        key, sep, value = requirement.replace("==", "=").partition("=")
        if not sep or key.strip() != APP_LABEL or not value.strip():
            raise Refusal(
                400,
                "BadRequest",
                f"labelSelector {selector!r}: only {APP_LABEL}=<StreamApp name> is understood",
            )
        apps.append(value.strip())
    if len(set(apps)) != 1:
        raise Refusal(400, "BadRequest", f"labelSelector {selector!r} names more than one app")
    return apps[0]


def value_list(metric: str, signal: AppSignal) -> dict[str, Any]:
    """The ``ExternalMetricValueList`` of one app's ``metric``."""
    read = METRICS.get(metric)
    if read is None:
        raise Refusal(404, "NotFound", f"external metric {metric!r} is not served")
    stamp = dt.datetime.fromtimestamp(signal.time, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "kind": "ExternalMetricValueList",
        "apiVersion": GROUP_VERSION,
        "metadata": {},
        "items": [
            {
                "metricName": metric,
                "metricLabels": {APP_LABEL: signal.app},
                "timestamp": stamp,
                "value": quantity(read(signal)),
            }
        ],
    }


def status(refusal: Refusal, details: dict[str, str] | None = None) -> dict[str, Any]:
    """A ``Status`` object, as every Kubernetes API answers a failure."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": refusal.message,
        "reason": refusal.reason,
        "details": {"group": GROUP, **(details or {})},
        "code": refusal.code,
    }


def resource_list() -> dict[str, Any]:
    """``/apis/external.metrics.k8s.io/v1beta1``: one namespaced resource per metric."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {
                "name": name,
                "singularName": "",
                "namespaced": True,
                "kind": "ExternalMetricValueList",
                "verbs": ["get"],
            }
            for name in sorted(METRICS)
        ],
    }


def api_group() -> dict[str, Any]:
    version = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": GROUP,
        "versions": [version],
        "preferredVersion": version,
    }


def openapi_v2() -> dict[str, Any]:
    """An empty but valid OpenAPI v2 document. The API server downloads one from every
    APIService to merge into its own, and logs an error each time it cannot."""
    return {"swagger": "2.0", "info": {"title": GROUP, "version": VERSION}, "paths": {}}


def openapi_v3() -> dict[str, Any]:
    """OpenAPI v3 discovery with no group documents (the same download, for v3)."""
    return {"paths": {}}


def api_group_list() -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]}
