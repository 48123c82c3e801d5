"""``segue simulate`` end to end on real Spark (local[*]): synthetic fleets, files, Kafka.

Runs go through the CLI's own entry point in this process, so they share one JVM
(pyspark keeps its gateway across sessions). Nothing is mocked or skipped: a Spark or
Java that cannot start makes the command exit 2 and the test fail. Fleets are tiny and
the policy list short: the simulations are most of the time.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from segue.cli import main
from segue.pipeline.catalog import parse
from segue.pipeline.evaluate import evaluate_all
from segue.pipeline.fleet import fleet
from segue.pipeline.rows import SUMMARY_METRICS, Result, ScenarioRow
from segue.pipeline.spark import session
from segue.stack import KafkaBroker

from .scenarios import history_lines, scale_out

pytestmark = pytest.mark.stack  # Spark

POLICIES = "eager,kip441,segue(warmups=4,standbys=0)"
Row = dict[str, Any]


def parquet(path: Path) -> list[Row]:
    spark = session.build(None)  # the JVM the runs started; the next run stops it
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(path)).collect()]


def metrics(rows: list[Row]) -> list[Row]:
    """Result rows without where they came from, in a stable order."""
    return sorted(
        ({k: v for k, v in r.items() if k not in ("source", "row")} for r in rows),
        key=lambda r: (r["scenario"], r["policy"]),
    )


def simulate(*args: str) -> int:
    return main(["simulate", *args])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synthetic")
    code = simulate("--synthetic", "2", "--seed", "1", "--out", str(out), "--policies", POLICIES)
    assert code == 0
    return out


def test_results_are_the_single_process_evaluation(synthetic: Path) -> None:
    rows = [
        ScenarioRow("synthetic(n=2,seed=1)", i + 1, s.model_dump_json())
        for i, s in enumerate(fleet(2, 1))
    ]
    expected = [asdict(r) for r in evaluate_all(rows, parse(POLICIES)) if isinstance(r, Result)]
    got = parquet(synthetic / "results")
    assert len(got) == 6

    def key(r: Row) -> tuple[str, str]:
        return r["scenario"], r["policy"]

    assert sorted(got, key=key) == sorted(expected, key=key)  # exact, every column
    assert parquet(synthetic / "errors") == []


def test_the_summary_is_the_plain_aggregate_of_the_results(synthetic: Path) -> None:
    results = parquet(synthetic / "results")
    summary = {r["policy"]: r for r in parquet(synthetic / "summary")}
    assert sorted(summary) == sorted(s.name for s in parse(POLICIES))
    for policy, row in summary.items():
        runs = [r for r in results if r["policy"] == policy]
        assert row["scenarios"] == len(runs) == 2
        assert row["never_balanced"] == sum(r["time_to_balance"] is None for r in runs)
        for metric in SUMMARY_METRICS:
            values = [r[metric] for r in runs if r[metric] is not None]
            if not values:
                assert row[f"{metric}_median"] is None
                continue
            assert row[f"{metric}_median"] == pytest.approx(statistics.median(values), rel=1e-12)
            assert row[f"{metric}_p90"] == pytest.approx(numpy.percentile(values, 90), rel=1e-12)
            assert row[f"{metric}_mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert summary["segue(warmups=4,standbys=0)"]["max_warmup_replicas"] == 4


def test_the_report_has_the_headline_plots_and_per_class_table(synthetic: Path) -> None:
    page = (synthetic / "report.html").read_text()
    assert "leaves the fewest task-seconds unavailable" in page
    assert "Best Segue point: <b>segue(warmups=4,standbys=0)</b>" in page
    assert page.count('src="data:image/png;base64,') == 3
    assert "Recommended Segue settings per app class" in page
    for cls in {r["app_class"] for r in parquet(synthetic / "results")}:
        assert f'<td class="l">{cls}</td>' in page
    assert "Bad rows (0)" in page


def scenario_lines() -> list[str]:
    """Two good scenarios around a bad one (line 3, after a blank line), then an app's
    recorded history (lines 5 on: the rows the simulator emits, one scenario)."""
    a = scale_out(duration=120).model_copy(update={"name": "a"})
    b = scale_out(replicas=2, to=3, duration=120).model_copy(update={"name": "b"})
    bad = json.loads(a.model_dump_json()) | {"name": "bad"}
    bad["subtopologies"][0]["partitions"] = 0
    return [a.model_dump_json(), "", json.dumps(bad), b.model_dump_json(), *history_lines()]


@pytest.fixture(scope="module")
def from_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("file")
    (folder / "scenarios.jsonl").write_text("\n".join(scenario_lines()) + "\n")
    out = folder / "out"
    code = simulate(
        "--scenarios",
        str(folder / "scenarios.jsonl"),
        "--out",
        str(out),
        "--policies",
        "eager,segue(warmups=4)",
    )
    assert code == 0
    return out


def test_a_bad_row_is_reported_and_the_others_finish(
    from_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (error,) = parquet(from_file / "errors")
    assert error["where"].endswith("scenarios.jsonl row 3")
    assert error["field"] == "subtopologies.0.partitions"
    assert error["message"].startswith("subtopologies.0.partitions: Input should be greater than")
    results = parquet(from_file / "results")
    assert sorted((r["scenario"], r["row"]) for r in results) == [
        ("a", 1),
        ("a", 1),
        ("b", 4),
        ("b", 4),
        ("wc", 5),  # the recorded app: named by its first row
        ("wc", 5),
    ]
    page = (from_file / "report.html").read_text()
    assert "Bad rows (1)" in page
    assert "subtopologies.0.partitions" in page


def test_parquet_scenarios_give_the_same_results_as_json_lines(
    from_file: Path, tmp_path: Path
) -> None:
    """A Parquet file of scenarios, nested columns and all (written here by Spark from the
    same JSON lines, bad row included), reads back into the same scenarios."""
    spark = session.build(None)
    lines = tmp_path / "lines.jsonl"
    lines.write_text("\n".join(filter(None, scenario_lines())) + "\n")
    spark.read.json(str(lines)).coalesce(1).write.parquet(str(tmp_path / "scenarios.parquet"))
    (part,) = (tmp_path / "scenarios.parquet").glob("part-*.parquet")
    out = tmp_path / "out"
    assert (
        simulate(
            "--scenarios", str(part), "--out", str(out), "--policies", "eager,segue(warmups=4)"
        )
        == 0
    )

    assert metrics(parquet(out / "results")) == metrics(parquet(from_file / "results"))
    (error,) = parquet(out / "errors")
    assert error["where"] == f"{part} row 2"
    assert error["field"] == "subtopologies.0.partitions"


def test_the_console_names_the_bad_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "one.jsonl").write_text(scenario_lines()[2] + "\n")
    assert (
        simulate(
            "--scenarios", str(tmp_path), "--out", str(tmp_path / "out"), "--policies", "eager"
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "one.jsonl row 1: subtopologies.0.partitions: Input should be greater than" in err


def test_kafka_rows_give_the_same_results_as_the_file(
    kafka: KafkaBroker, from_file: Path, tmp_path: Path
) -> None:
    topic = f"scenarios-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for future in admin.create_topics([NewTopic(topic, num_partitions=2)]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for line in filter(None, scenario_lines()):
        producer.produce(topic, value=line.encode())
    assert producer.flush(30) == 0
    url = f"kafka://{kafka.bootstrap_servers}/{topic}"
    assert (
        simulate("--scenarios", url, "--out", str(tmp_path), "--policies", "eager,segue(warmups=4)")
        == 0
    )

    got = parquet(tmp_path / "results")
    assert all(r["source"].startswith(f"{url} partition ") for r in got)
    assert metrics(got) == metrics(parquet(from_file / "results"))
    (error,) = parquet(tmp_path / "errors")
    assert error["field"] == "subtopologies.0.partitions"
    assert " offset " in error["where"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenarios", "/nonexistent/scenarios.jsonl"], "no such file or directory"),
        (["--synthetic", "2", "--master", "bogus"], "not a Spark master URL"),
        (["--synthetic", "2", "--policies", "eager,nope"], "unknown policy 'nope'"),
        (["--scenarios", "kafka://nohost"], "expected kafka://HOST:PORT/TOPIC"),
        (["--synthetic", "2", "--conf", "ui=off"], "expected spark.KEY=VALUE"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert simulate(*args, "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert err.startswith("segue simulate: error: ")
    assert message in err


def test_a_folder_without_scenarios_and_an_empty_file_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert simulate("--scenarios", str(tmp_path), "--out", str(tmp_path / "o")) == 2
    assert "no .jsonl, .ndjson, .json, .parquet files" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert simulate("--scenarios", str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "o")) == 2
    assert "no scenario rows" in capsys.readouterr().err


def test_kafka_without_the_connector_jars_says_how_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEGUE_SPARK_JARS", str(tmp_path))  # a folder with no jars
    assert simulate("--scenarios", "kafka://127.0.0.1:9/t", "--out", str(tmp_path / "o")) == 2
    assert "--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0" in capsys.readouterr().err


def test_the_command_has_help_and_a_usage_error_for_a_bad_count() -> None:
    segue = [sys.executable, "-m", "segue", "simulate"]
    out = subprocess.run([*segue, "--help"], capture_output=True, text=True, check=True).stdout
    assert "--synthetic N" in out
    assert "kafka://HOST:PORT/TOPIC" in out
    bad = subprocess.run(
        [*segue, "--synthetic", "0", "--out", "x"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2
    assert "must be at least 1" in bad.stderr
