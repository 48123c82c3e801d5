"""The show's report: ``report.html`` beside four PNG timelines, and the JSON line.

Timelines, all against seconds since the show started, with each step marked: the
input lag (monitor samples), the output rate (committed output per second, by the
records' broker append time), pods and their member roles, and each handover's pause
(``tally.pauses``; failovers in red). The HTML's table style and table builder are
the what-if report's (``segue.pipeline.report.html``); PNGs are written as files so
they can be looked at on their own.
"""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from segue.pipeline.report.html import STYLE, _table
from segue.stack.demo.monitor import Move, Sample
from segue.stack.demo.tally import Out

ROLES = ("member", "joining", "leaving", "absent", "rolling")


def _figure(title: str, ylabel: str, marks: list[tuple[float, str]]) -> tuple[Figure, Any]:
    fig = Figure(figsize=(9, 2.8))
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel("seconds since start")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    for at, label in marks:
        ax.axvline(at, color="grey", linestyle=":", linewidth=1)
        ax.annotate(label, (at, 1), xycoords=("data", "axes fraction"), fontsize=7,
                    rotation=90, va="top", ha="right")  # fmt: skip
    return fig, ax


def _save(fig: Figure, path: Path) -> str:
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=100, bbox_inches="tight")
    return path.name


def timelines(
    directory: Path,
    start: float,
    *,
    samples: list[Sample],
    records: list[Out],
    pauses: list[tuple[Move, float]],
    marks: list[tuple[float, str]],
) -> dict[str, str]:
    """Draw the four PNGs into ``directory``: title -> file name."""
    marks = [(at - start, label) for at, label in marks]
    xs = [s.at - start for s in samples]
    out = {}

    fig, ax = _figure("Input lag", "records", marks)
    ax.plot(xs, [s.lag if s.lag is not None else float("nan") for s in samples])
    out["Input lag"] = _save(fig, directory / "lag.png")

    fig, ax = _figure("Throughput (committed output)", "records/s", marks)
    per_second = Counter(int(r.at - start) for r in records)
    seconds = sorted(per_second)
    ax.plot(seconds, [per_second[s] for s in seconds], drawstyle="steps-post")
    out["Throughput"] = _save(fig, directory / "throughput.png")

    fig, ax = _figure("Pods and roles", "pods", marks)
    ax.plot(xs, [s.replicas for s in samples], color="black", linestyle="--", label="spec")
    bottom = [0] * len(samples)
    for role in ROLES:
        counts = [s.roles.get(role, 0) for s in samples]
        if any(counts):
            top = [b + c for b, c in zip(bottom, counts, strict=True)]
            ax.fill_between(xs, bottom, top, step="post", alpha=0.6, label=role)
            bottom = top
    ax.legend(fontsize=7, loc="upper left")
    out["Pods and roles"] = _save(fig, directory / "pods.png")

    fig, ax = _figure("Each handover's pause", "ms", marks)
    for failover in (False, True):
        chosen = [(m.seen - start, gap * 1000) for m, gap in pauses if m.failover is failover]
        if chosen:
            ax.scatter(*zip(*chosen, strict=True), color="red" if failover else "tab:blue",
                       label="failover" if failover else "handover", s=14)  # fmt: skip
    ax.legend(fontsize=7, loc="upper left")
    out["Handover pauses"] = _save(fig, directory / "pauses.png")
    return out


def write_html(
    directory: Path, result: dict[str, Any], *, pngs: dict[str, str], log: list[str],
    pauses: list[tuple[Move, float]], start: float,
) -> Path:  # fmt: skip
    rows = [
        (f"{m.seen - start:.1f}", m.task, m.old, m.new, "failover" if m.failover else "handover",
         round(gap * 1000, 1))
        for m, gap in pauses
    ]  # fmt: skip
    body = [
        "<h1>Segue demo: WordCount under scaling</h1>",
        f"<pre>{escape(json.dumps(result))}</pre>",
        "<h2>Steps</h2>",
        f"<pre>{escape(chr(10).join(log))}</pre>",
        *(
            f'<h2>{escape(t)}</h2><img alt="{escape(t)}" src="{escape(f)}">'
            for t, f in pngs.items()
        ),
        "<h2>Handovers</h2>",
        _table(("seconds", "task", "from", "to", "kind", "pause ms"), rows, left=5),
    ]
    path = directory / "report.html"
    path.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>Segue demo</title>"
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>",
        encoding="utf-8",
    )
    return path
