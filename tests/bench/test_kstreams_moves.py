"""bench/kstreams' handover count and trace: the counting tasks' owner changes on both
sides' timelines, the fewest moves balance needs, and a handover's steps read back from
the worker and operator log lines the real processes write."""

from __future__ import annotations

import logging

import pytest

from bench.kstreams.cpu import Usage
from bench.kstreams.events import TaskEvent
from bench.kstreams.moves import Move, counting_moves, needed, reports_timeline
from bench.kstreams.trace import parse_operator, parse_worker, trace
from segue.worker.trace import PATTERN, phase


def test_a_round_trip_is_two_handovers_and_moved_twice() -> None:
    timeline = [
        (0.0, {"1_0": "a", "1_1": "a", "1_2": "b", "0_0": "a"}),
        (1.0, {"1_0": "c", "1_1": "a", "1_2": "b", "0_0": "c"}),
        (2.0, {"1_0": "a", "1_1": "a", "1_2": "b"}),
    ]
    moves = counting_moves(timeline)
    assert [(m.task, m.source, m.target) for m in moves.moves] == [
        ("1_0", "a", "c"),
        ("1_0", "c", "a"),
    ]
    assert moves.twice == ["1_0"]
    assert moves.needed == 0  # a ends as it began


def test_a_task_without_an_owner_for_a_moment_has_not_moved() -> None:
    timeline = [(0.0, {"1_0": "a"}), (1.0, {}), (2.0, {"1_0": "a"}), (3.0, {"1_0": "b"})]
    assert [(m.source, m.target) for m in counting_moves(timeline).moves] == [("a", "b")]


def test_the_fewest_moves_of_2_to_3_and_3_to_6() -> None:
    two = {"1_0": "a", "1_1": "a", "1_2": "a", "1_3": "b", "1_4": "b", "1_5": "b"}
    three = {**two, "1_2": "c", "1_5": "c"}
    assert needed(two, three) == 2
    six = {"1_0": "a", "1_1": "d", "1_2": "b", "1_3": "e", "1_4": "c", "1_5": "f"}
    assert needed(three, six) == 3
    shuffled = {"1_0": "b", "1_1": "a", "1_2": "c", "1_3": "a", "1_4": "b", "1_5": "c"}
    assert needed(three, shuffled) == 0  # moves between instances no balance asks for


def ks(t: float, *active: str) -> TaskEvent:
    return TaskEvent(event="tasks", t=int(t * 1000), state="RUNNING", active=active, standby=())


def test_kafka_streams_reports_overlapping_keep_the_task_with_its_last_owner() -> None:
    reports = {
        "ks-0": [ks(0, "1_0", "1_1"), ks(5, "1_1")],
        "ks-1": [ks(0, "1_2"), ks(4, "1_2", "1_0")],  # ks-0 has not let go yet at 4 s
    }
    timeline = reports_timeline(reports, since=1.0)
    assert timeline[0] == (1.0, {"1_0": "ks-0", "1_1": "ks-0", "1_2": "ks-1"})
    assert timeline[1][1]["1_0"] == "ks-0"  # both report it at 4 s
    moves = counting_moves(timeline)
    assert [(m.time, m.task, m.source, m.target) for m in moves.moves] == [
        (5.0, "1_0", "ks-0", "ks-1")
    ]


def test_a_phase_line_reads_back(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="segue.worker.trace"):
        phase("1_3", "fenced", "seconds=0.042")
    match = PATTERN.match(caplog.records[0].getMessage())
    assert match is not None
    assert (match["task"], match["phase"], match["detail"]) == ("1_3", "fenced", "seconds=0.042")


OLD = """\
2026-11-25 10:00:01,000 INFO segue.worker.runtime: applying generation 7: Diff(...)
2026-11-25 10:00:01,100 INFO segue.worker.trace: handover task=1_3 phase=released seconds=0.090
2026-11-25 10:00:01,150 INFO segue.worker.trace: handover task=1_3 phase=left demoted to standby
"""
NEW = """\
2026-11-25 10:00:01,050 INFO segue.worker.runtime: applying generation 7: Diff(...)
2026-11-25 10:00:01,300 INFO segue.worker.trace: handover task=1_3 phase=fenced seconds=0.2
2026-11-25 10:00:01,320 INFO segue.worker.trace: handover task=1_3 phase=measured counts=4
2026-11-25 10:00:01,400 INFO segue.worker.state.restore: restored task=1_3 store=counts \
from=1 to=4 records=3 seconds=0.080
2026-11-25 10:00:01,401 INFO segue.worker.trace: handover task=1_3 phase=running
2026-11-25 10:00:01,500 INFO segue.worker.trace: handover task=1_3 phase=first-record t[3]@9
2026-11-25 10:00:01,650 INFO segue.worker.trace: handover task=1_3 phase=first-commit seconds=0.05
"""
OPERATOR = (
    "[2026-11-25 10:00:00,900] segue.operator       [INFO    ] ns/wc: GenerationPublished: "
    "generation 7: 4 members, 1 handovers\n"
)


def test_a_handover_traced_from_the_logs_step_by_step() -> None:
    published = parse_operator(OPERATOR)
    pods = {"wc-0": parse_worker(OLD), "wc-3": parse_worker(NEW)}
    at = published[7]
    visible = [at - 0.5, at - 0.02, at + 0.8]  # last output before, first after
    traced = trace(
        Move(at + 0.3, "1_3", "wc-0", "wc-3"),
        7,
        published=published,
        pods=pods,
        visible=visible,
        usage=Usage(dict),
    )
    assert traced is not None
    steps = {k: round(v, 2) for k, v in traced.steps.items()}
    assert steps == {
        "operator published": 0.02,
        "old seen": 0.12,
        "old released": 0.22,
        "old left": 0.27,
        "new seen": 0.17,
        "new fenced": 0.42,
        "new measured": 0.44,
        "new restored": 0.52,
        "new running": 0.52,
        "new first-record": 0.62,
        "new first-commit": 0.77,
        "reader visible": 0.82,
    }
    assert round(traced.length, 2) == 0.82
