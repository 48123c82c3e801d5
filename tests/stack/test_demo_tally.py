"""The demo's pure parts, on literal data: a script parses (or names the bad step), a
seed gives one script, and the tally finds lost and duplicated counts and the pause of
a handover in a task's output."""

from __future__ import annotations

import pytest

from segue.stack.demo.monitor import Move
from segue.stack.demo.steps import Step, StepError, parse_script, random_script
from segue.stack.demo.tally import Out, exactness, pause, pauses, percentile, summary


def test_a_script_parses_and_a_bad_step_is_named() -> None:
    assert parse_script(["scale=6", "kill", "partitions=2", "burst=100"]) == [
        Step("scale", 6),
        Step("kill"),
        Step("partitions", 2),
        Step("burst", 100),
    ]
    for bad, says in [
        ("scael=3", "'scael=3': the kind must be one of"),
        ("scale=x", "'scale=x': scale needs a whole number"),
        ("kill=2", "'kill=2': kill takes no value"),
        ("partitions=1", "'partitions=1': partitions must be at least 2"),
    ]:
        with pytest.raises(StepError, match=says):
            parse_script(["scale=2", bad])


def test_a_seed_gives_one_script() -> None:
    assert random_script(7, 20) == random_script(7, 20)
    assert random_script(7, 20) != random_script(8, 20)
    assert {s.kind for s in random_script(7, 50)} == {"scale", "kill"}


def outputs(word: str, counts: list[int], partition: int = 0) -> list[Out]:
    return [Out(partition, float(i), word, c) for i, c in enumerate(counts)]


def test_exactness_counts_missing_and_repeated_counts() -> None:
    sent = {"a": 3, "b": 2}
    assert exactness(outputs("a", [1, 2, 3]) + outputs("b", [1, 2]), sent) == (0, 0)
    assert exactness(outputs("a", [1, 3]) + outputs("b", [1, 2]), sent) == (1, 0)
    assert exactness(outputs("a", [1, 2, 2, 3]) + outputs("b", [1, 2, 3]), sent) == (0, 2)
    assert exactness(outputs("c", [1]), sent) == (5, 1)  # a word never sent is extra


def test_a_handovers_pause_is_the_longest_gap_in_its_window() -> None:
    times = [0.0, 0.1, 0.2, 0.3, 1.5, 1.6, 1.7, 9.0, 9.05]  # stopped 0.3 .. 1.5
    move = Move("1_0", "p0", "p1", before=1.0, seen=1.4, failover=False)
    assert pause(move, times) == pytest.approx(1.2)
    # A gap far from the move (7.3 s at 1.7) is not its pause.
    assert pause(Move("1_0", "p0", "p1", 0.15, 0.25, False), times) == pytest.approx(1.2)
    assert pause(Move("1_0", "p0", "p1", 20.0, 20.5, False), times) is None


def test_summary_reports_pauses_of_counting_tasks_only() -> None:
    records = [Out(0, t, "a", i + 1) for i, t in enumerate([0.0, 0.1, 0.9, 1.0])]
    moves = [
        Move("1_0", "p0", "p1", 0.1, 0.5, failover=False),
        Move("0_0", "p0", "p1", 0.1, 0.5, failover=False),  # splitting: no output of its own
    ]
    assert [m.task for m, _ in pauses(moves, records)] == ["1_0"]
    result = summary(moves, records, {"a": 4}, balanced=True)
    assert result["handovers"] == 1
    assert result["max_pause_ms"] == pytest.approx(800.0)
    assert (result["records_lost"], result["records_duplicated"]) == (0, 0)
    assert result["balanced"] is True
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.99) == 4.0
