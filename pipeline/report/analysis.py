"""What the report concludes, as plain data: the headline, the Pareto front, the advice.

Pure functions of the summary rows (one per policy) and the result rows (one per
scenario and policy), so they are tested without Spark or matplotlib.

- The *winner* has the lowest median task-seconds unavailable over the fleet (ties: the
  lower mean); the headline compares the best Segue point with each baseline by the
  ratio of their medians (and of their means, which a fleet of zeros leaves defined).
- The *Pareto front* of mean task-seconds unavailable against mean pod-hours: the
  policies no other policy beats on one without losing on the other.
- The *recommendation* per app class (:func:`segue.pipeline.rows.app_class`): among
  Segue's points, the lowest median task-seconds unavailable within a pod-hours budget
  of the class's cheapest Segue point plus :data:`BUDGET` (ties: lower mean
  unavailability, then fewer pod-hours, then name).
- *Never balanced*: per policy, the runs some disturbance of which never balanced,
  grouped by the reason the run ended with.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]
BUDGET = 0.10  # pod-hours allowed above the class's cheapest Segue point
UNAVAILABLE = "task_seconds_unavailable"


@dataclass(frozen=True)
class Comparison:
    baseline: str
    baseline_median: float
    median_ratio: float | None  # baseline / best Segue point; None when Segue's is 0
    mean_ratio: float | None


@dataclass(frozen=True)
class Headline:
    winner: str
    winner_never_balanced: int  # runs of the winner that never balanced: a caveat
    best_segue: str | None
    segue_median: float
    comparisons: list[Comparison]


def _key(row: Row) -> tuple[float, float, str]:
    return (row[f"{UNAVAILABLE}_median"], row[f"{UNAVAILABLE}_mean"], row["policy"])


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def headline(summary: Sequence[Row]) -> Headline | None:
    if not summary:
        return None
    winner = min(summary, key=_key)
    segue = [r for r in summary if r["policy_kind"] == "segue"]
    best = min(segue, key=_key) if segue else None
    comparisons = [
        Comparison(
            r["policy"],
            r[f"{UNAVAILABLE}_median"],
            _ratio(r[f"{UNAVAILABLE}_median"], best[f"{UNAVAILABLE}_median"]),
            _ratio(r[f"{UNAVAILABLE}_mean"], best[f"{UNAVAILABLE}_mean"]),
        )
        for r in summary
        if best is not None and r["policy_kind"] != "segue"
    ]
    return Headline(
        winner["policy"],
        winner["never_balanced"],
        best["policy"] if best else None,
        best[f"{UNAVAILABLE}_median"] if best else 0.0,
        comparisons,
    )


def pareto(summary: Sequence[Row]) -> list[str]:
    """The policies on the front of (mean pod-hours, mean unavailability), cheapest first."""
    points = {r["policy"]: (r["pod_hours_mean"], r[f"{UNAVAILABLE}_mean"]) for r in summary}

    def beaten(p: tuple[float, float]) -> bool:
        return any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points.values())

    return sorted((n for n, p in points.items() if not beaten(p)), key=lambda n: points[n])


@dataclass(frozen=True)
class Advice:
    app_class: str
    scenarios: int
    policy: str
    unavailable_median: float
    pod_hours_mean: float
    budget: float
    best_baseline: str | None
    baseline_median: float | None


def recommend(results: Sequence[Row]) -> list[Advice]:
    """The Segue point to run per app class (the rule is the module's docstring)."""
    out = []
    for cls in sorted({r["app_class"] for r in results}):
        runs = [r for r in results if r["app_class"] == cls]
        stats = _per_policy(runs)
        segue = {p: s for p, s in stats.items() if s[3] == "segue"}
        if not segue:
            continue
        budget = min(s[2] for s in segue.values()) * (1 + BUDGET)
        within = [(s[0], s[1], s[2], p) for p, s in segue.items() if s[2] <= budget]
        median, _, hours, name = min(within)
        others = [(s[0], p) for p, s in stats.items() if s[3] != "segue"]
        base = min(others) if others else None
        out.append(
            Advice(
                cls,
                len({(r["source"], r["row"]) for r in runs}),
                name,
                median,
                hours,
                budget,
                base[1] if base else None,
                base[0] if base else None,
            )
        )
    return out


def _per_policy(runs: Sequence[Row]) -> dict[str, tuple[float, float, float, str]]:
    """policy -> (median unavailability, mean unavailability, mean pod-hours, kind)."""
    by: dict[str, list[Row]] = {}
    for r in runs:
        by.setdefault(r["policy"], []).append(r)
    return {
        p: (
            statistics.median(r[UNAVAILABLE] for r in rs),
            statistics.fmean(r[UNAVAILABLE] for r in rs),
            statistics.fmean(r["pod_hours"] for r in rs),
            rs[0]["policy_kind"],
        )
        for p, rs in by.items()
    }


@dataclass(frozen=True)
class NeverBalanced:
    """Runs of one policy that never balanced for one reason (its numbers as N)."""

    policy: str
    reason: str
    runs: int
    examples: list[str]  # the first few scenarios, by name


EXAMPLES = 3


def never_balanced(results: Sequence[Row]) -> list[NeverBalanced]:
    """Per policy, its never-balanced runs grouped by reason; most runs first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r["time_to_balance"] is None:
            reason = re.sub(r"\d[\d.,]*", "N", r.get("unbalanced") or "no reason recorded")
            groups.setdefault((r["policy"], reason), []).append(r["scenario"])
    out = [
        NeverBalanced(policy, reason, len(names), sorted(names)[:EXAMPLES])
        for (policy, reason), names in groups.items()
    ]
    return sorted(out, key=lambda n: (n.policy, -n.runs, n.reason))
