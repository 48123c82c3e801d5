"""The per-scenario work: results per policy, and bad input as rows that say where."""

from __future__ import annotations

import json

from segue.pipeline.catalog import parse
from segue.pipeline.evaluate import evaluate, evaluate_all, unit_key
from segue.pipeline.recorded import to_scenarios
from segue.pipeline.rows import Failure, Result, ScenarioRow, app_class
from segue.pipeline.simulate import simulate
from segue.protocol.history import HistoryRecord

from .scenarios import history_lines, scale_out

POLICIES = parse("segue(warmups=4),eager")


def good(name: str = "a") -> str:
    return scale_out(duration=60).model_copy(update={"name": name}).model_dump_json()


def test_a_row_gives_one_result_per_policy_with_the_outcome_s_metrics() -> None:
    out = evaluate(ScenarioRow("f.jsonl", 1, good()), POLICIES)
    assert [type(x) for x in out] == [Result, Result]
    assert isinstance(out[0], Result)
    assert isinstance(out[1], Result)
    assert [r.policy for r in out] == ["segue(warmups=4,standbys=0)", "eager"]
    direct = simulate(
        scale_out(duration=60).model_copy(update={"name": "a"}), POLICIES[1].controller()
    )
    assert out[1].task_seconds_unavailable == direct.task_seconds_unavailable
    assert out[1].balance_times == list(direct.balance_times)
    assert out[0].max_warmup_replicas == 4
    assert out[1].max_warmup_replicas is None
    assert out[0].tasks == 8
    assert out[0].state_bytes == 8 * 100_000_000
    assert out[0].app_class == "small-state/few-tasks"
    assert json.loads(out[0].params)["max_warmup_replicas"] == 4


def test_a_bad_row_is_one_failure_naming_the_row_and_the_field() -> None:
    row = json.loads(good())
    row["subtopologies"][0]["partitions"] = 0
    (failure,) = evaluate(ScenarioRow("scenarios.jsonl", 3, json.dumps(row)), POLICIES)
    assert isinstance(failure, Failure)
    assert failure.field == "subtopologies.0.partitions"
    assert str(failure).startswith(
        "scenarios.jsonl row 3: subtopologies.0.partitions: Input should be greater than"
    )
    assert failure.policy == ""


def test_text_that_is_not_json_is_a_failure_too() -> None:
    (failure,) = evaluate(ScenarioRow("t", 1, "{nope", unit="offset"), POLICIES)
    assert isinstance(failure, Failure)
    assert failure.where == "t offset 1"
    assert "JSON" in failure.message


def test_evaluate_all_keeps_going_past_a_bad_row() -> None:
    rows = [
        ScenarioRow("f", 1, good("a")),
        ScenarioRow("f", 2, "[]"),
        ScenarioRow("f", 3, good("b")),
    ]
    out = evaluate_all(rows, POLICIES)
    assert [(type(x).__name__, x.row) for x in out] == [
        ("Result", 1),
        ("Result", 1),
        ("Failure", 2),
        ("Result", 3),
        ("Result", 3),
    ]


def test_history_rows_of_one_app_are_one_unit() -> None:
    a = {"spec_replicas": 1, "app": "wc", "namespace": "n", "time": 0}
    assert unit_key(ScenarioRow("f", 1, json.dumps(a))) == "history:n/wc"
    assert unit_key(ScenarioRow("f", 2, json.dumps(a | {"time": 1}))) == "history:n/wc"
    assert unit_key(ScenarioRow("f", 3, good())) == "row:f:row:3"


def test_app_classes_bucket_state_and_tasks() -> None:
    s = scale_out(partitions=40)
    big = s.model_copy(
        update={
            "subtopologies": [s.subtopologies[0].model_copy(update={"state_bytes": [10**9] * 40})]
        }
    )
    assert app_class(s) == "medium-state/many-tasks"  # 40 x 100 MB
    assert app_class(big) == "large-state/many-tasks"


def test_an_app_s_history_rows_are_replayed_as_its_scenario() -> None:
    lines = history_lines()
    rows = [ScenarioRow("h.jsonl", i + 1, line) for i, line in enumerate(lines)]
    out = evaluate_all(list(reversed(rows)), POLICIES)  # in any order
    assert [type(x) for x in out] == [Result, Result]
    (scenario,) = to_scenarios(HistoryRecord.model_validate_json(line) for line in lines)
    direct = simulate(scenario, POLICIES[1].controller())
    assert isinstance(out[1], Result)
    assert (out[1].scenario, out[1].source, out[1].row) == (scenario.name, "h.jsonl", 1)
    assert out[1].task_seconds_unavailable == direct.task_seconds_unavailable


def test_a_bad_history_row_fails_its_app_naming_the_row() -> None:
    lines = history_lines()
    bad = json.loads(lines[4]) | {"spec_replicas": -1}
    lines[4] = json.dumps(bad)
    rows = [ScenarioRow("h.jsonl", i + 1, line) for i, line in enumerate(lines)]
    (failure,) = evaluate_all(rows, POLICIES)
    assert isinstance(failure, Failure)
    assert failure.where == "h.jsonl row 5"
    assert failure.field == "spec_replicas"
