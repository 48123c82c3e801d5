"""``segue.operator.observe.scrape``: a worker's ``/metrics`` page into a WorkerReport.

Pure: literal pages, plus the page the worker's own collector renders, so a
metric renamed on the worker side breaks here and not in production."""

from __future__ import annotations

import re

import pytest
from prometheus_client import generate_latest

from segue.operator.observe import WorkerReport, offsets, parse_worker_metrics
from segue.worker.metrics import Snapshot, StoreReport, TaskReport, WorkerMetrics

PAGE = """\
# HELP segue_assignment_errors_total Generations or tasks the worker could not apply
# TYPE segue_assignment_errors_total counter
segue_assignment_errors_total{reason="unknown_task"} 2.0
segue_assignment_errors_total{reason="missing_topic"} 1.0
# HELP segue_assignment_errors_created Generations or tasks the worker could not apply
# TYPE segue_assignment_errors_created gauge
segue_assignment_errors_created{reason="unknown_task"} 1.7953447932730777e+09
# TYPE segue_assignment_generation gauge
segue_assignment_generation 7.0
# TYPE segue_task_role gauge
segue_task_role{role="active",task="0_1"} 1.0
segue_task_role{role="standby",task="0_1"} 0.0
segue_task_role{role="learning",task="0_1"} 0.0
segue_task_role{role="active",task="1_2"} 0.0
segue_task_role{role="standby",task="1_2"} 0.0
segue_task_role{role="learning",task="1_2"} 1.0
# TYPE segue_task_state gauge
segue_task_state{state="running",task="0_1"} 1.0
segue_task_state{state="failed",task="0_1"} 0.0
segue_task_state{state="standby",task="1_2"} 1.0
# TYPE segue_task_restored_offset gauge
segue_task_restored_offset{store="counts",task="0_1"} 41.0
segue_task_restored_offset{store="totals",task="0_1"} 9.0
segue_task_restored_offset{store="counts",task="1_2"} 1200.0
# TYPE segue_task_changelog_end_offset gauge
segue_task_changelog_end_offset{store="counts",task="0_1"} 42.0
segue_task_changelog_end_offset{store="totals",task="0_1"} 10.0
segue_task_changelog_end_offset{store="counts",task="1_2"} 1500.0
# TYPE segue_task_lag gauge
segue_task_lag{task="0_1"} 0.0
segue_task_lag{task="1_2"} 300.0
# TYPE segue_task_local_offset gauge
segue_task_local_offset{store="counts",task="2_0"} 77.0
# TYPE segue_task_state_bytes gauge
segue_task_state_bytes{task="0_1"} 4096.0
segue_task_state_bytes{task="2_0"} 512.0
# TYPE segue_task_records_processed_total counter
segue_task_records_processed_total{task="0_1"} 1234.0
# TYPE segue_task_fenced_total counter
segue_task_fenced_total{task="0_1"} 1.0
# TYPE segue_worker_ready gauge
segue_worker_ready 1.0
"""


def test_a_full_page() -> None:
    report = parse_worker_metrics(PAGE)
    assert report == WorkerReport(
        generation=7,
        roles={"0_1": "active", "1_2": "learning"},
        restored={"0_1": {"counts": 41, "totals": 9}, "1_2": {"counts": 1200}},
        local={"2_0": {"counts": 77}},
        changelog_end={"0_1": {"counts": 42, "totals": 10}, "1_2": {"counts": 1500}},
        lag={"0_1": 0, "1_2": 300},
        state_bytes={"0_1": 4096, "2_0": 512},
        processed={"0_1": 1234},
        errors={"unknown_task": 2, "missing_topic": 1},
        states={"0_1": "running", "1_2": "standby"},
        ready=True,
    )


def test_offsets_prefer_what_runs_then_what_is_on_disk() -> None:
    report = parse_worker_metrics(PAGE)
    expected = {
        "0_1": {"counts": 41, "totals": 9},
        "1_2": {"counts": 1200},
        "2_0": {"counts": 77},
    }
    assert offsets(report) == expected
    assert report.offsets() == expected


def test_offsets_of_a_stateless_task_and_of_a_task_both_running_and_on_disk() -> None:
    report = WorkerReport(
        roles={"0_0": "active", "1_0": "standby"},
        restored={"1_0": {"counts": 5}},
        local={"1_0": {"counts": 3}, "1_1": {"counts": 8}},
    )
    assert offsets(report) == {"0_0": {}, "1_0": {"counts": 5}, "1_1": {"counts": 8}}


def test_a_worker_before_its_first_generation() -> None:
    page = """\
# TYPE segue_assignment_generation gauge
# TYPE segue_task_role gauge
# TYPE segue_worker_ready gauge
segue_worker_ready 0.0
"""
    assert parse_worker_metrics(page) == WorkerReport(generation=None, ready=False)


def test_an_empty_page_and_foreign_metrics() -> None:
    assert parse_worker_metrics("") == WorkerReport()
    page = 'python_gc_objects_collected_total{generation="0"} 10.0\nup 1\n'
    assert parse_worker_metrics(page) == WorkerReport()


def test_what_the_worker_renders_parses_back() -> None:
    metrics = WorkerMetrics()
    metrics.assignment_errors.labels(reason="copartitioning").inc(3)
    metrics.publish(
        Snapshot(
            generation=12,
            tasks=(
                TaskReport(
                    "0_0", "active", "running", (StoreReport("counts", 99, 100, 90, 990),), 0, 2048
                ),
                TaskReport("0_3", "standby", "standby", (StoreReport("counts", 10, 60),), 50, 64),
            ),
            local_offsets={("0_5", "counts"): 31},
            local_bytes={"0_5": 128},
            processed={"0_0": 500},
            restored_records={("0_3", "counts"): 7},
            restored_bytes={("0_3", "counts"): 77},
            fenced={"0_0": 1},
            ready=True,
        )
    )
    report = parse_worker_metrics(generate_latest(metrics.registry).decode())
    assert report == WorkerReport(
        generation=12,
        roles={"0_0": "active", "0_3": "standby"},
        restored={"0_0": {"counts": 99}, "0_3": {"counts": 10}},
        local={"0_5": {"counts": 31}},
        changelog_end={"0_0": {"counts": 100}, "0_3": {"counts": 60}},
        lag={"0_0": 0, "0_3": 50},
        state_bytes={"0_0": 2048, "0_3": 64, "0_5": 128},
        processed={"0_0": 500},
        changelog_records={"0_0": 90, "0_3": 0},
        changelog_bytes={"0_0": 990, "0_3": 0},
        restored_records={"0_3": 7},
        restored_bytes={"0_3": 77},
        errors={"copartitioning": 3},
        states={"0_0": "running", "0_3": "standby"},
        ready=True,
    )
    assert offsets(report) == {"0_0": {"counts": 99}, "0_3": {"counts": 10}, "0_5": {"counts": 31}}


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("<html>oops</html>", "invalid metric name"),
        ('segue_task_lag{task="0_0"} many\n', "could not convert"),
        ("segue_task_lag 3\n", "segue_task_lag{}: missing label(s) ['task']"),
        ('segue_task_restored_offset{task="0_0"} 3\n', "missing label(s) ['store']"),
        ('segue_task_lag{task="0_0"} 2.5\n', "2.5 is not a whole number"),
        ("segue_assignment_generation NaN\n", "is not a whole number"),
        ("segue_assignment_generation +Inf\n", "is not a whole number"),
    ],
)
def test_a_page_that_does_not_parse(page: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_worker_metrics(page)


def test_tasks_a_worker_cannot_run_are_read_with_reason_and_message() -> None:
    page = """\
# TYPE segue_task_error gauge
segue_task_error{message="topic 'counts' does not exist",reason="TopicMissing",task="1_0"} 1.0
segue_task_error{message="",reason="StartFailed",task="1_1"} 1.0
segue_task_error{message="gone",reason="StartFailed",task="1_2"} 0.0
"""
    report = parse_worker_metrics(page)
    assert report.task_errors == {
        "1_0": ("TopicMissing", "topic 'counts' does not exist"),
        "1_1": ("StartFailed", ""),
    }
    with pytest.raises(ValueError, match="reason"):
        parse_worker_metrics('# TYPE segue_task_error gauge\nsegue_task_error{task="1_0"} 1.0\n')
