"""report.html: one self-contained page (figures inline) from the run's rows.

Sections, in order: the headline, the per-policy summary, the distributions of time to
balance and of task-seconds unavailable, the Pareto front of unavailability against
pod-hours, the recommended Segue settings per app class (with the rule), and the rows
that could not be replayed. Every value is escaped; nothing is fetched when it opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from segue.pipeline.rows import FEW_TASKS

from . import analysis, plots

Row = dict[str, Any]
STYLE = (
    "body{font-family:sans-serif;max-width:70em;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;"
    "padding:2px 6px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
)
COLUMNS = (
    "scenarios",
    "never_balanced",
    "time_to_balance_median",
    "time_to_balance_p90",
    "task_seconds_unavailable_median",
    "task_seconds_unavailable_p90",
    "records_processed_late_median",
    "state_bytes_restored_median",
    "generations_published_median",
    "peak_active_skew_median",
    "pod_hours_mean",
)


TTB_TITLE = "Time to balance (worst disturbance; runs that never balanced left out)"
UNAV_TITLE = "Task-seconds unavailable"


def _img(alt: str, uri: str) -> str:
    return f'<img alt="{escape(alt)}" src="{uri}">'


def _num(x: object) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.3g}" if abs(x) < 1000 else f"{x:,.0f}"
    return escape(str(x))


def _table(head: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    cls = [' class="l"' if i < left else "" for i in range(len(head))]
    out = [
        "<table><tr>",
        *(f"<th{c}>{escape(h)}</th>" for c, h in zip(cls, head, strict=True)),
        "</tr>",
    ]
    for row in rows:
        cells = (
            f"<td{c}>{_num(v) if i >= left else escape(str(v))}</td>"
            for i, (c, v) in enumerate(zip(cls, row, strict=True))
        )
        out += ["<tr>", *cells, "</tr>"]
    return "".join([*out, "</table>"])


def _headline(h: analysis.Headline | None, scenarios: int) -> str:
    if h is None:
        return "<p>No results.</p>"
    caveat = (
        f" It never balanced in {h.winner_never_balanced} of them: a run that does not move "
        f"its tasks leaves them available."
        if h.winner_never_balanced
        else ""
    )
    lines = [
        f"<p><b>{escape(h.winner)}</b> leaves the fewest task-seconds unavailable "
        f"(median over {scenarios} scenarios).{caveat}</p>"
    ]
    if h.best_segue is not None:
        lines.append(
            f"<p>Best Segue point: <b>{escape(h.best_segue)}</b>, median "
            f"{_num(h.segue_median)} task-seconds unavailable. Against it:</p><ul>"
        )
        for c in h.comparisons:
            ratio = f"{c.median_ratio:.1f}x" if c.median_ratio is not None else "n/a (Segue's is 0)"
            mean = f"{c.mean_ratio:.1f}x" if c.mean_ratio is not None else "n/a"
            lines.append(
                f"<li>{escape(c.baseline)}: median {_num(c.baseline_median)} "
                f"({ratio} Segue's median; {mean} its mean)</li>"
            )
        lines.append("</ul>")
    return "".join(lines)


def _never(results: Sequence[Row]) -> str:
    kinds = analysis.never_balanced(results)
    if not kinds:
        return "<p>None: every run balanced after every disturbance.</p>"
    return _table(
        ["policy", "reason", "runs", "scenarios"],
        [[k.policy, k.reason, k.runs, ", ".join(k.examples)] for k in kinds],
        left=2,
    )


def render(results: Sequence[Row], summary: Sequence[Row], errors: Sequence[Row]) -> str:
    scenarios = len({(r["source"], r["row"]) for r in results})
    front = analysis.pareto(summary)
    advice = analysis.recommend(results)
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>segue simulate</title>"
        f"<style>{STYLE}</style></head><body><h1>What-if: scaling policies on "
        f"{scenarios} scenarios</h1><h2>Headline</h2>",
        _headline(analysis.headline(summary), scenarios),
    ]
    parts += [
        "<h2>Per policy</h2>",
        _table(["policy", *COLUMNS], [[r["policy"], *(r[c] for c in COLUMNS)] for r in summary]),
        "<h2>Never balanced, and why</h2>",
        "<p>Runs where some disturbance never balanced before the scenario ended, by the "
        "reason at its end (the policy's own account, Segue's as its status says it, else "
        "the simulator's balance test; numbers shown as N).</p>",
        _never(results),
    ]
    if results:
        ttb = plots.distribution(results, "time_to_balance", TTB_TITLE, "seconds")
        unavailable = plots.distribution(results, analysis.UNAVAILABLE, UNAV_TITLE, "task-seconds")
        parts += [
            "<h2>Distributions</h2>",
            _img("time to balance", ttb),
            _img("task-seconds unavailable", unavailable),
            "<h2>Pareto front</h2>",
            _img("pareto front", plots.pareto(summary, front)),
            f"<p>On the front (cheapest first): {escape(', '.join(front))}.</p>",
        ]
    parts += [
        "<h2>Recommended Segue settings per app class</h2>",
        f"<p>App class: total state at t=0 (small &lt; 1 GB &le; medium &lt; 10 GB &le; large) "
        f"and tasks (few &le; {FEW_TASKS} &lt; many). Rule: among the Segue points, the lowest "
        f"median task-seconds unavailable among those whose mean pod-hours are within "
        f"{analysis.BUDGET:.0%} of the class's cheapest Segue point; ties go to the lower mean, "
        f"then fewer pod-hours.</p>",
        _table(
            [
                "app class",
                "scenarios",
                "recommended",
                "median unavailable",
                "mean pod-hours",
                "pod-hours budget",
                "best baseline",
                "its median",
            ],
            [
                [
                    a.app_class,
                    a.scenarios,
                    a.policy,
                    a.unavailable_median,
                    a.pod_hours_mean,
                    a.budget,
                    a.best_baseline or "-",
                    a.baseline_median,
                ]
                for a in advice
            ],
            left=1,
        ),
        f"<h2>Bad rows ({len(errors)})</h2>",
    ]
    if errors:
        parts.append(
            _table(
                ["where", "policy", "field", "message"],
                [[e["where"], e["policy"], e["field"], e["message"]] for e in errors],
                left=4,
            )
        )
    else:
        parts.append("<p>None: every row was replayed.</p>")
    return "".join([*parts, "</body></html>"])
