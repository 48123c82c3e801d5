"""The chart's Grafana dashboard as the tests read it: its panels' queries, with Grafana's
variables put in as Grafana would put them."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from segue.stack.prometheus import PrometheusServer
from tests.chart.helm import only, render

ENABLED = {"metrics": {"dashboard": {"enabled": True}}}
RATE_INTERVAL = "10s"  # Grafana's $__rate_interval at a 1 s scrape (4 x scrape, rounded up)
# panel -> why a scale without faulty tasks leaves it without data
EMPTY_WITHOUT_FAILURES = {"Tasks that cannot run": "no task fails"}
VARIABLE = re.compile(r"label_values\((?P<match>.*), (?P<label>\w+)\)$")


def dashboard(values: dict[str, Any] | None = None) -> dict[str, Any]:
    """The dashboard the chart renders (its ConfigMap's one JSON file)."""
    maps = only(render(values or ENABLED), "ConfigMap")
    (config_map,) = [c for c in maps if c["metadata"]["name"].endswith("-dashboard")]
    (text,) = config_map["data"].values()
    found: dict[str, Any] = json.loads(text)
    return found


def panels(board: dict[str, Any]) -> dict[str, list[str]]:
    """title -> the PromQL of each of its targets."""
    return {p["title"]: [t["expr"] for t in p["targets"]] for p in board["panels"]}


def variables(board: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name -> (series selector, label) of each ``label_values`` query variable."""
    out = {}
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            found = VARIABLE.match(var["query"])
            assert found, var["query"]
            out[var["name"]] = (found["match"], found["label"])
    return out


def put_in(expr: str, namespace: str, app: str, rate_interval: str) -> str:
    """``expr`` with ``$namespace``, ``$app`` and ``$__rate_interval`` as Grafana fills them."""
    return (
        expr.replace("$namespace", namespace)
        .replace("$app", app)
        .replace("$__rate_interval", rate_interval)
    )


def assert_panels_have_data(
    prometheus: PrometheusServer, namespace: str, app: str, start: float, end: float
) -> dict[str, int]:
    """Every variable's ``label_values`` finds ``namespace`` and ``app``, and every panel's
    queries, run over [start, end] as Grafana runs them (a range query), answer without
    error with at least one finite value, but for :data:`EMPTY_WITHOUT_FAILURES`.
    Returns the finite points of each panel."""
    board = dashboard()
    for name, (selector, label) in variables(board).items():
        match = put_in(selector, namespace, app, RATE_INTERVAL)
        values = prometheus.api(f"label/{label}/values", **{"match[]": match})
        assert {"namespace": namespace, "app": app}[name] in values, (name, values)
    found: dict[str, int] = {}
    for title, exprs in panels(board).items():
        found[title] = 0
        for expr in exprs:
            query = put_in(expr, namespace, app, RATE_INTERVAL)
            span = {"start": f"{start:.3f}", "end": f"{end:.3f}", "step": "1"}
            result = prometheus.api("query_range", query=query, **span)["result"]
            found[title] += sum(
                1 for series in result for _, v in series["values"] if math.isfinite(float(v))
            )
    empty = sorted(t for t, n in found.items() if n == 0 and t not in EMPTY_WITHOUT_FAILURES)
    assert empty == [], f"panels without data: {empty}; points per panel: {found}"
    return found
