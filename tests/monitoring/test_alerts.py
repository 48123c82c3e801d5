"""The chart's alerts, unit-tested by the real ``promtool`` (issue 27).

The rules are the ones the chart renders (``metrics.prometheusRule.enabled``), written
out as a rule file; ``promtool check rules`` lints them and ``promtool test rules`` runs
alerts_test.yaml, which shows every alert firing on series built for it and silent on
the ones next to it. A test also holds every alert to having such a case and to naming
the StreamApp (or the operator's namespace) in its words.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from segue.stack.prometheus import binary
from tests.chart.helm import only, render, with_values

HERE = Path(__file__).parent
ENABLED = {"metrics": {"prometheusRule": {"enabled": True}}}


def rules(values: dict[str, Any]) -> dict[str, Any]:
    (rule,) = only(render(values), "PrometheusRule")
    return dict(rule["spec"])


def alerts(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in spec["groups"] for r in g["rules"] if "alert" in r}


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary("promtool")), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_every_alert_fires_and_stays_silent_where_promtool_says(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules(ENABLED)))
    shutil.copy(HERE / "alerts_test.yaml", tmp_path)
    checked = promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = promtool("test", "rules", "alerts_test.yaml", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout, tested.stdout


def test_promtool_fails_an_alert_that_does_not_fire(tmp_path: Path) -> None:
    """The unit tests can fail: with the Degraded alert's window lengthened past the
    case's evaluation, promtool reports the alert missing."""
    slow = {"metrics": {"prometheusRule": {"enabled": True, "for": "30m"}}}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules(slow)))
    shutil.copy(HERE / "alerts_test.yaml", tmp_path)
    tested = promtool("test", "rules", "alerts_test.yaml", cwd=tmp_path)
    assert tested.returncode != 0
    assert "SegueAppDegraded" in tested.stdout + tested.stderr


def test_every_alert_has_a_firing_case_and_names_what_it_is_about() -> None:
    cases = yaml.safe_load((HERE / "alerts_test.yaml").read_text())["tests"]
    firing = {t["alertname"] for c in cases for t in c["alert_rule_test"] if t["exp_alerts"]}
    found = alerts(rules(ENABLED))
    assert sorted(set(found) - firing) == []
    for name, rule in found.items():
        words = rule["annotations"]["summary"] + rule["annotations"]["description"]
        if rule["expr"].find("segue_app_") >= 0 or "segue_operator_events" in rule["expr"]:
            assert "{{ $labels.namespace }}/{{ $labels.app }}" in words, name
        assert "kubectl" in rule["annotations"]["description"], f"{name}: where to look"


@pytest.mark.parametrize(
    ("values", "present"),
    [
        ({}, False),
        (ENABLED, True),
        ({**ENABLED, "externalMetrics": {"enabled": False}}, True),
    ],
)
def test_the_rule_is_off_by_default_and_follows_the_external_metrics_api(
    values: dict[str, Any], present: bool
) -> None:
    found = only(render(values), "PrometheusRule")
    assert bool(found) == present
    if found:
        external = values.get("externalMetrics", {}).get("enabled", True)
        assert ("SegueExternalMetricsUnavailable" in alerts(found[0]["spec"])) == external


def test_alerts_without_the_operators_metrics_are_refused_by_name() -> None:
    result = with_values("template", {**ENABLED, "metrics": {"port": 0, **ENABLED["metrics"]}})
    assert result.returncode != 0
    assert "metrics.prometheusRule.enabled needs a metrics.port" in result.stderr
