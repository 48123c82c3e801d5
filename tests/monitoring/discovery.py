"""What the monitoring e2e tests scrape: the operator and every pod of the app, kept in
the stack's Prometheus' target file as pods come and go (what a ServiceMonitor and a
PodMonitor do in a cluster)."""

from __future__ import annotations

import threading

from segue.stack.apps import Apps
from segue.stack.prometheus import PrometheusServer
from tests.faults.harness import NAME
from tests.faults.owners import METRICS_PORT
from tests.operator.e2e import OperatorProcess


class Discovery(threading.Thread):
    """Keeps Prometheus' target file at the operator plus every pod of the app."""

    def __init__(self, prometheus: PrometheusServer, apps: Apps, operator: OperatorProcess) -> None:
        super().__init__(daemon=True)
        self.prometheus, self.apps, self.operator = prometheus, apps, operator
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            try:
                pods = self.apps.pods(NAME)
            except Exception:  # the API server is away: keep the last targets
                continue
            namespace = self.apps.namespace
            groups = [
                (
                    [f"127.0.0.1:{self.operator.metrics_port}"],
                    {"namespace": namespace, "pod": "operator"},
                )
            ]
            for name, pod in sorted(pods.items()):
                if pod.status.pod_ip:
                    labels = {"namespace": namespace, "pod": name, "app": NAME}
                    groups.append(([f"{pod.status.pod_ip}:{METRICS_PORT}"], labels))
            self.prometheus.targets(groups)
