"""The report's figures as PNG data URIs, so report.html is one self-contained file.

matplotlib's object API with the Agg canvas (never pyplot: no global figure state, no
display needed). Distributions are horizontal box plots on a symmetric-log axis, since
one policy's seconds can be a hundred times another's and zero is common.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

Row = dict[str, Any]
SEGUE_COLOUR, BASELINE_COLOUR = "#1f77b4", "#d62728"


def _png(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def distribution(results: Sequence[Row], metric: str, title: str, unit: str) -> str:
    """One box per policy of ``metric`` over the scenarios (nulls left out)."""
    policies = sorted({r["policy"] for r in results})
    data = [
        [r[metric] for r in results if r["policy"] == p and r[metric] is not None] for p in policies
    ]
    fig = Figure(figsize=(8, 0.45 * len(policies) + 1.5))
    ax = fig.add_subplot()
    ax.boxplot([d or [0.0] for d in data], orientation="horizontal", tick_labels=policies)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel(unit)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def pareto(summary: Sequence[Row], front: Sequence[str]) -> str:
    """Mean pod-hours against mean task-seconds unavailable; the front joined by a line."""
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    for r in summary:
        colour = SEGUE_COLOUR if r["policy_kind"] == "segue" else BASELINE_COLOUR
        x, y = r["pod_hours_mean"], r["task_seconds_unavailable_mean"]
        ax.scatter([x], [y], color=colour)
        ax.annotate(r["policy"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    points = {r["policy"]: r for r in summary}
    line = [points[p] for p in front]
    ax.plot(
        [r["pod_hours_mean"] for r in line],
        [r["task_seconds_unavailable_mean"] for r in line],
        color="grey",
        linestyle="--",
        label="Pareto front",
    )
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("pod-hours (mean per scenario)")
    ax.set_ylabel("task-seconds unavailable (mean per scenario)")
    ax.set_title("Unavailability against cost (blue: Segue points, red: baselines)")
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    return _png(fig)
