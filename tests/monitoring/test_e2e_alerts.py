"""An alert fires in a real Prometheus and clears after recovery (issue 27 item 2).

The stack's Prometheus scrapes the operator and every pod of WordCount (file-based
discovery, kept up to date from the API as pods come) and evaluates the chart's own
rules, rendered with short windows. The fault: a scale 2 -> 4 whose learners restore at
5 records/s (``SEGUE_STANDBY_RESTORE_RATE``) while the input makes each changelog grow
faster, so no learner ever catches up. ``SegueLearnerStalled`` must fire naming the app,
the task and the member; once the input stops, the learners gain on their changelogs and
it must clear. Every count stays exact throughout.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from segue.stack.apps import Apps
from segue.stack.prometheus import PrometheusServer
from tests.faults.harness import NAME, start
from tests.faults.owners import METRICS_PORT
from tests.operator.e2e import OperatorProcess, wait_for

from .test_alerts import rules

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
WINDOW = "30s"  # learnerStallWindow, short for the test (10m by default)
FAST = {
    "metrics": {"prometheusRule": {"enabled": True, "for": "20s", "learnerStallWindow": WINDOW}}
}
STALLED = "SegueLearnerStalled"


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


def stalled(prometheus: PrometheusServer, state: str = "firing") -> list[dict[str, Any]]:
    return [
        a
        for a in prometheus.alerts()
        if a["labels"]["alertname"] == STALLED and a["state"] == state
    ]


def test_a_stalled_learner_fires_in_prometheus_and_clears_once_it_restores(  # noqa: PLR0917
    kube: Any,
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
    tmp_path: Path,
) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules(FAST)))
    prometheus = PrometheusServer(tmp_path, [tmp_path / "rules.yaml"])
    prometheus.start()
    discovery = Discovery(prometheus, apps, operator)
    discovery.start()
    run = start(
        kafka, apps, operator, pod_runner, replicas=2, lines=3000, rate=100,
        env={"SEGUE_STANDBY_RESTORE_RATE": "5"},
    )  # fmt: skip
    why = run.why
    try:
        assert not stalled(prometheus, "pending")
        assert not stalled(prometheus)
        apps.scale(NAME, 4)
        wait_for("learners in flight", lambda: apps.learning(NAME), 60, why)
        learning = time.monotonic()
        wait_for(f"{STALLED} firing", lambda: stalled(prometheus), 180, why)
        fired = time.monotonic() - learning
        (alert,) = stalled(prometheus)[:1]
        labels, words = alert["labels"], alert["annotations"]["description"]
        assert (labels["namespace"], labels["app"]) == (apps.namespace, NAME), alert
        assert labels["member"] in {f"{NAME}-2", f"{NAME}-3"}, alert
        assert f"The learner of task {labels['task']} on {labels['member']}" in words, words
        assert f"-n {apps.namespace}" in words, words
        # the pods are scraped too: the learner's own lag, as its worker reports it
        lag = f'segue_task_lag{{pod="{labels["member"]}",task="{labels["task"]}"}}'
        assert prometheus.query(lag), lag

        run.stop()  # the input stops: the changelogs stop growing, the learners gain
        stopped = time.monotonic()
        wait_for(f"{STALLED} cleared", lambda: not stalled(prometheus), 180, why)
        cleared = time.monotonic() - stopped
    finally:
        run.stop()
        discovery.stopped.set()
        prometheus.stop()
    run.finish()
    print(
        f"\n{STALLED} (window {WINDOW}) fired {fired:.1f}s after the learners started "
        f"({labels['task']} on {labels['member']}), cleared {cleared:.1f}s after the input stopped"
    )
