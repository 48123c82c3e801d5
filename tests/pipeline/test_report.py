"""The report's conclusions on hand-made rows, and the page they make."""

from __future__ import annotations

from typing import Any

from segue.pipeline.report import analysis, render

Row = dict[str, Any]


def summary_row(policy: str, kind: str, median: float, mean: float, hours: float) -> Row:
    row: Row = {"policy": policy, "policy_kind": kind, "scenarios": 2, "never_balanced": 0}
    for metric in ("time_to_balance", "records_processed_late", "state_bytes_restored"):
        row |= {f"{metric}_median": 1.0, f"{metric}_p90": 2.0, f"{metric}_mean": 1.5}
    for metric in ("generations_published", "peak_active_skew"):
        row |= {f"{metric}_median": 1.0, f"{metric}_p90": 1.0, f"{metric}_mean": 1.0}
    row |= {
        "task_seconds_unavailable_median": median,
        "task_seconds_unavailable_p90": median,
        "task_seconds_unavailable_mean": mean,
        "pod_hours_median": hours,
        "pod_hours_p90": hours,
        "pod_hours_mean": hours,
    }
    return row


SUMMARY = [
    summary_row("segue(warmups=2,standbys=0)", "segue", 4.0, 5.0, 2.0),
    summary_row("segue(warmups=2,standbys=1)", "segue", 2.0, 3.0, 3.0),
    summary_row("eager", "eager", 40.0, 60.0, 2.0),
    summary_row("kip441", "kip441", 8.0, 9.0, 2.5),
]


def test_the_headline_names_the_winner_and_the_ratios() -> None:
    h = analysis.headline(SUMMARY)
    assert h is not None
    assert h.winner == "segue(warmups=2,standbys=1)"
    assert h.best_segue == "segue(warmups=2,standbys=1)"
    ratios = {c.baseline: (c.median_ratio, c.mean_ratio) for c in h.comparisons}
    assert ratios == {"eager": (20.0, 20.0), "kip441": (4.0, 3.0)}


def test_the_pareto_front_drops_the_dominated() -> None:
    # kip441 costs more than segue(2,0) and loses more: off the front; eager ties on cost
    assert analysis.pareto(SUMMARY) == [
        "segue(warmups=2,standbys=0)",
        "segue(warmups=2,standbys=1)",
    ]


def result(policy: str, kind: str, cls: str, n: int, cost: tuple[float, float]) -> Row:
    """``cost``: (task-seconds unavailable, pod-hours)."""
    unavailable, hours = cost
    return {
        "source": "f",
        "row": n,
        "policy": policy,
        "policy_kind": kind,
        "app_class": cls,
        "task_seconds_unavailable": unavailable,
        "time_to_balance": 10.0,
        "pod_hours": hours,
    }


def test_the_recommendation_is_the_best_segue_point_within_the_pod_hours_budget() -> None:
    results = [
        # small: standbys halve unavailability but cost 50% more pod-hours: over budget
        *(result("segue(a)", "segue", "small", n, (10.0, 2.0)) for n in (1, 2)),
        *(result("segue(b)", "segue", "small", n, (5.0, 3.0)) for n in (1, 2)),
        *(result("segue(c)", "segue", "small", n, (8.0, 2.1)) for n in (1, 2)),
        *(result("eager", "eager", "small", n, (50.0, 2.0)) for n in (1, 2)),
        # large: only one Segue point
        result("segue(a)", "segue", "large", 3, (1.0, 9.0)),
    ]
    advice = {a.app_class: a for a in analysis.recommend(results)}
    assert advice["small"].policy == "segue(c)"
    assert advice["small"].scenarios == 2
    assert advice["small"].best_baseline == "eager"
    assert advice["large"].policy == "segue(a)"
    assert advice["large"].best_baseline is None


def test_the_page_has_every_section_and_escapes_what_it_shows() -> None:
    results = [result(p["policy"], p["policy_kind"], "small", 1, (1.0, 1.0)) for p in SUMMARY]
    errors = [{"where": "f row 2", "policy": "", "field": "name", "message": "<script>", "row": 2}]
    page = render(results, SUMMARY, errors)
    for section in ("Headline", "Per policy", "Distributions", "Pareto front", "Bad rows (1)"):
        assert section in page
    assert page.count('src="data:image/png;base64,') == 3
    assert "<script>" not in page
    assert "&lt;script&gt;" in page


def test_never_balanced_runs_are_counted_per_policy_by_reason() -> None:
    def never(policy: str, n: int, why: str) -> Row:
        row = result(policy, policy, "small", n, (1.0, 1.0))
        return row | {"scenario": f"s-{n}", "time_to_balance": None, "unbalanced": why}

    results = [
        never("segue", 1, "Balanced False NotBalanced: 7 task(s) not yet on their target member"),
        never("segue", 2, "Balanced False NotBalanced: 12 task(s) not yet on their target member"),
        never("eager", 3, "pod app-4 is not up"),
        {**never("segue", 4, ""), "time_to_balance": 3.0, "unbalanced": None},
    ]
    kinds = analysis.never_balanced(results)
    assert [(k.policy, k.reason, k.runs, k.examples) for k in kinds] == [
        ("eager", "pod app-N is not up", 1, ["s-3"]),
        (
            "segue",
            "Balanced False NotBalanced: N task(s) not yet on their target member",
            2,
            ["s-1", "s-2"],
        ),
    ]
    page = render(results, [], [])
    assert "Never balanced, and why" in page
    assert "pod app-N is not up" in page
