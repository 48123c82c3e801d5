"""Read a Kafka Streams app's group ConfigMap: the plugin's last report and outcome.

The plugin (the group leader's) writes both at each rebalance; the operator only reads
them (its pods may patch this one ConfigMap, ``act.access``). A report that does not
parse is said, never guessed at: the world has no topology then, and the status says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException

from segue.protocol.kstreams import (
    Applied,
    GroupReport,
    ReportError,
    decode_applied,
    decode_report_configmap,
)
from segue.protocol.names import group_configmap


@dataclass(frozen=True)
class Group:
    report: GroupReport | None  # None before the first rebalance
    applied: Applied | None  # what the plugin returned for a report, None before that
    error: str | None = None  # why the ConfigMap could not be read


def read_group(core: CoreV1Api, namespace: str, app: str) -> Group:
    name = group_configmap(app)
    try:
        cm = core.read_namespaced_config_map(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return Group(None, None)
        raise
    try:
        report = decode_report_configmap(cm.binary_data)
        applied = decode_applied(cm.data)
    except ReportError as exc:
        return Group(None, None, f"ConfigMap {name}: {exc}")
    return Group(report, applied)
