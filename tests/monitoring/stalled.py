"""Prometheus watching a scale whose learners stall: the stack's own Prometheus server
scraping the operator and every pod of WordCount (file-based discovery, kept up to date
from the API as pods come), evaluating the chart's own rules rendered with short windows.
tests/operator/test_e2e_status.py runs it beside the status commands on one scale."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from segue.stack.apps import Apps
from segue.stack.prometheus import PrometheusServer
from tests.operator.e2e import OperatorProcess

from .discovery import Discovery
from .test_alerts import rules

# learnerStallWindow, short for the test; the chart's default (10m) is the one
# tests/monitoring/alerts_test.yaml runs under promtool
WINDOW = "10s"
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


@contextmanager
def watching(tmp_path: Path, apps: Apps, operator: OperatorProcess) -> Iterator[PrometheusServer]:
    """Prometheus with the chart's rules (short windows), scraping the operator and the
    app's pods for as long as the block runs."""
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules(FAST)))
    prometheus = PrometheusServer(tmp_path, [tmp_path / "rules.yaml"])
    prometheus.start()
    discovery = Discovery(prometheus, apps, operator)
    discovery.start()
    try:
        yield prometheus
    finally:
        discovery.stopped.set()
        prometheus.stop()
