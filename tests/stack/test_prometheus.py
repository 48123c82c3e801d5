"""The stack's Prometheus: a real server scrapes what its target file lists, with the
target's labels, and evaluates a rule file's alert (issue 27). No Kafka, no Kubernetes:
the target is a prometheus-client page served by this test."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Gauge, start_http_server

from segue.stack.process import free_port
from segue.stack.prometheus import PrometheusServer

pytestmark = pytest.mark.stack  # Prometheus

RULES = """
groups:
  - name: smoke
    rules:
      - alert: TooHigh
        expr: smoke_value > 5
        annotations:
          description: "{{ $labels.namespace }}/{{ $labels.app }} at {{ $value }}"
"""


def wait(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout}s")


def test_it_scrapes_its_targets_and_fires_and_clears_an_alert(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    value = Gauge("smoke_value", "a value", ["namespace", "app"], registry=registry)
    value.labels("team", "wc").set(1)
    port = free_port()
    server, _ = start_http_server(port, addr="127.0.0.1", registry=registry)
    (tmp_path / "rules.yaml").write_text(RULES)
    prometheus = PrometheusServer(tmp_path, [tmp_path / "rules.yaml"])
    prometheus.start()
    try:
        prometheus.targets([([f"127.0.0.1:{port}"], {"namespace": "ops", "pod": "op-0"})])
        found = wait("the value scraped", lambda: prometheus.query("smoke_value"))
        # honor_labels: the page's namespace stays; the target's other labels are added
        assert found[0]["metric"]["namespace"] == "team"
        assert found[0]["metric"]["pod"] == "op-0"
        assert prometheus.alerts() == []
        value.labels("team", "wc").set(9)
        firing = wait("the alert firing", prometheus.alerts)
        assert firing[0]["labels"]["alertname"] == "TooHigh"
        assert firing[0]["annotations"]["description"] == "team/wc at 9"
        value.labels("team", "wc").set(2)
        wait("the alert cleared", lambda: prometheus.alerts() == [])
    finally:
        prometheus.stop()
        server.shutdown()
