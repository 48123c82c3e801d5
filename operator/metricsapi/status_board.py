"""A standby replica's board: each app's signal as the leader last wrote it to the
StreamApp's status (``status.autoscaling``, :mod:`segue.operator.act.signal_status`).

Only the leader runs the loops that compute signals, but the chart's Service spreads the
aggregator's connections over every replica, and the aggregator keeps a connection
open for long: a standby that answered "not me" could starve the HPA for as long. So a
standby answers from the status instead, one GET of the StreamApp per request (an HPA
asks once per sync, every 15 s by default), as fresh as the leader's last write.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kubernetes.client import CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from segue.operator.act.signal_status import from_status
from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.autoscale import AppSignal
from segue.operator.metricsapi.values import Refusal
from segue.operator.scaling import KAFKA_UNAVAILABLE


class StatusBoard:
    def __init__(self, api_client: Any) -> None:
        self.custom = CustomObjectsApi(api_client)

    def get(self, namespace: str, app: str) -> AppSignal | None:
        try:
            obj: Any = self.custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, app, _request_timeout=5
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            why = f"StreamApp {namespace}/{app}: {exc.reason}"
            raise Refusal(503, "ServiceUnavailable", why) from exc
        replicas = int((obj.get("spec") or {}).get("replicas") or 0)
        status = obj.get("status") or {}
        signal = from_status(namespace, app, replicas, status.get("autoscaling"))
        kafka = next(
            (
                c
                for c in status.get("conditions") or []
                if (c.get("type"), c.get("status"), c.get("reason"))
                == ("Degraded", "True", KAFKA_UNAVAILABLE)
            ),
            None,
        )  # what the leader says while it cannot read the input: its signal is not one
        if signal is None or kafka is None:
            return signal
        return replace(signal, unknown=f"Kafka unavailable: {kafka.get('message', '')}")
