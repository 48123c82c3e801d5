"""The chart's Grafana dashboard, without a cluster: off by default, a ConfigMap for
Grafana's sidecar when on, one app per view ($namespace, $app), and every panel's query
valid PromQL (promtool checks each as a recording rule)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from segue.stack.prometheus import binary
from tests.chart.helm import CHART, only, render

from .dashboard import dashboard, panels, put_in, variables

# what the issue asks a platform team to see, by panel title
ASKED = {
    "Members by role",
    "Pods needed and active",
    "Input lag",
    "Seconds to catch up",
    "Input and processing rate",
    "Restore progress per learner",
    "Handovers",
    "Handover pause",
    "Assignment generation",
}


def test_it_is_off_by_default_and_labelled_for_the_sidecar_when_on() -> None:
    assert not [c for c in only(render({}), "ConfigMap") if "dashboard" in c["metadata"]["name"]]
    values = {"metrics": {"dashboard": {"enabled": True, "label": "team_dash", "namespace": "mon"}}}
    (config_map,) = [
        c for c in only(render(values), "ConfigMap") if "dashboard" in c["metadata"]["name"]
    ]
    assert config_map["metadata"]["labels"]["team_dash"] == "1"
    assert config_map["metadata"]["namespace"] == "mon"
    assert dashboard(values) == dashboard()  # the file itself, whatever the label


def test_every_panel_shows_one_app_and_what_was_asked() -> None:
    board = dashboard()
    shown = panels(board)
    assert sorted(ASKED - set(shown)) == []
    for title, exprs in shown.items():
        assert exprs, title
        for expr in exprs:
            assert 'namespace="$namespace"' in expr, (title, expr)
            assert 'app="$app"' in expr, (title, expr)
    assert set(variables(board)) == {"namespace", "app"}
    assert board == yaml.safe_load((CHART / "dashboards" / "streamapp.json").read_text())


def test_every_query_is_valid_promql(tmp_path: Path) -> None:
    rules = [
        {"record": f"panel:{i}", "expr": put_in(expr, "team", "wc", "1m")}
        for i, expr in enumerate(e for exprs in panels(dashboard()).values() for e in exprs)
    ]
    (tmp_path / "panels.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "p", "rules": rules}]})
    )
    checked = subprocess.run(
        [str(binary("promtool")), "check", "rules", "panels.yaml"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
