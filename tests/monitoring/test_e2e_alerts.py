"""An alert fires in a real Prometheus and clears after recovery, and every dashboard
panel has data during the scale (issue 27 items 2 and 3).

The stack's Prometheus scrapes the operator and every pod of WordCount (file-based
discovery, kept up to date from the API as pods come) and evaluates the chart's own
rules, rendered with short windows. The fault: a scale 2 -> 4 whose learners restore at
5 records/s (``SEGUE_STANDBY_RESTORE_RATE``) while the input makes each changelog grow
faster, so no learner ever catches up. ``SegueLearnerStalled`` must fire naming the app,
the task and the member; once the input stops, the learners gain on their changelogs and
it must clear. Every count stays exact throughout.

While the alert fires (stateless tasks handed over, learners stuck, the scale in
flight), every panel of the chart's Grafana dashboard runs over the test so far as
Grafana runs it (``dashboard.assert_panels_have_data``): no Grafana server, its queries
are what is tested.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from segue.stack.apps import Apps
from segue.stack.prometheus import PrometheusServer
from tests.faults.harness import NAME, start
from tests.operator.e2e import OperatorProcess, wait_for

from .dashboard import assert_panels_have_data
from .discovery import Discovery
from .test_alerts import rules

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
WINDOW = "30s"  # learnerStallWindow, short for the test (10m by default)
FAST = {
    "metrics": {"prometheusRule": {"enabled": True, "for": "20s", "learnerStallWindow": WINDOW}}
}
STALLED = "SegueLearnerStalled"


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
    began = time.time()
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
        points = assert_panels_have_data(prometheus, apps.namespace, NAME, began, time.time())

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
        f"; dashboard points per panel: {points}"
    )
