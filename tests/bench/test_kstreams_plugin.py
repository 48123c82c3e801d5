"""The Kafka Streams + Segue side of bench/kstreams, its pure parts: a pod's log, where the
instance's events meet the JVM's and Kafka's lines, reads back into the same events the
Kafka Streams side measures by; the plugin's fallbacks are counted, from the pods' logs and
timed from the operator's; the table gives the side its rows, its rebalances and its ratio
to Kafka Streams."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from bench.kstreams.events import FALLBACK, read_log
from bench.kstreams.measure import Lateness
from bench.kstreams.moves import Moves
from bench.kstreams.plugin_side import fallbacks, flight_recording
from bench.kstreams.report import Row, table
from bench.kstreams.run import build_parser
from segue.operator.api.spec import Scaling

LOG = "\n".join(
    [
        "Picked up JAVA_TOOL_OPTIONS: -javaagent:/segue/agent/segue-kstreams.jar",
        '{"event":"tasks","t":1000,"state":"REBALANCING","active":[],"standby":[]}',
        "[main] WARN dev.segue.kstreams.SegueTaskAssignor - Segue's answer is not usable "
        f"(no answer within 5000 ms): Kafka Streams' {FALLBACK} the tasks until it is",
        '{"event":"tasks","t":2000,"state":"RUNNING","active":["0_1","1_1"],"standby":["1_2"]}',
        '{"event":"restored","t":2500,"kind":"standby","partition":2,"records":700}',
        '{"event":"tasks","t":2600,"sta',  # a line cut short: said, not skipped
        "[kafka-producer] ERROR org.apache.kafka.clients.producer.KafkaProducer - boom",
        "[StreamThread-1] INFO o.a.k.s.p.i.StreamsPartitionAssignor - Assigned tasks",
    ]
)


def test_a_pods_log_reads_back_into_the_instances_events() -> None:
    log = read_log(LOG)
    assert [(e.t, e.state, e.active) for e in log.tasks] == [
        (1000, "REBALANCING", ()),
        (2000, "RUNNING", ("0_1", "1_1")),
    ]
    assert [(e.partition, e.records) for e in log.restores] == [(2, 700)]
    assert len(log.fallbacks) == 1
    assert "not usable" in log.fallbacks[0]
    assert len(log.errors) == 2
    assert "not an instance event" in log.errors[0]
    assert "boom" in log.errors[1]


def test_the_operators_fallback_events_are_timed() -> None:
    text = "\n".join(
        [
            "[2026-11-26 01:06:09,723] segue.operator       [INFO    ] ns/kwc: ScalingUp: 2 "
            "replicas: kwc-0, kwc-1 join as learners",
            "[2026-11-26 01:06:19,268] segue.operator       [INFO    ] ns/kwc: AssignorFallback: "
            "the group leader did not use Segue's answer to report r1 (...)",
            "  AssignorFallback: quoted in a traceback, not an event",
        ]
    )
    (when,) = fallbacks(text)
    assert when == datetime(2026, 11, 26, 1, 6, 19, 268000).timestamp()


def row(side: str, balanced: float, rebalances: int | None) -> Row:
    return Row(
        side,
        2,
        3,
        balanced,
        3,
        1000,
        2000,
        Lateness(5, 100, {0: (1.5, 12.0)}),
        [2, 2, 2],
        10.0,
        Moves([], 2),
        rebalances=rebalances,
        notes="plugin fallbacks in the pods' logs: 0" if rebalances else "",
    )


def test_the_table_gives_the_plugin_side_its_rebalances_and_its_ratio_to_kafka_streams() -> None:
    args = argparse.Namespace(
        words=20_000, rate=300.0, probing_ms=60_000, learner_promotion="batch"
    )
    rows = [
        row("Kafka Streams", 130.0, 4),
        row("Kafka Streams + Segue", 6.5, 3),
        row("Kafka Streams + Segue", 7.5, 5),
    ]
    lines = table(rows, args).splitlines()
    columns = lines[2].count("|")
    assert all(line.count("|") == columns for line in lines[2:]), lines
    assert "| 2->3 | Kafka Streams | 1 | 130.0 |" in lines[4]
    assert lines[4].split("|")[-3].strip() == "4"
    assert "| 2->3 | Kafka Streams + Segue | median of 2 | 7.0 |" in lines[7]
    assert lines[7].split("|")[-3].strip() == "4"
    assert lines[8].startswith("| 2->3 | KS + Segue / KS | | 0.05 | 1.00 |")
    assert "4 rebalances; plugin fallbacks in the pods' logs: 0" in rows[0].describe()
    assert "Kafka Streams + Segue learnerPromotion=batch;" in lines[0]


def test_the_learner_promotion_flag_reaches_the_streamapp_the_bench_applies() -> None:
    """``--learner-promotion batch`` as docs/benchmarks.md types it: a value the
    StreamApp accepts, and eager (the API's default) without the flag."""
    command = "--sides plugin --runs 3 --scales 2:3 3:6 --learner-promotion batch"
    args = build_parser().parse_args([*command.split(), "--workdir", "DIR"])
    assert args.learner_promotion == "batch"
    scaling = Scaling.model_validate({"learnerPromotion": args.learner_promotion})
    assert scaling.learner_promotion == "batch"
    assert build_parser().parse_args([]).learner_promotion == Scaling().learner_promotion


def test_a_flight_recording_is_asked_for_only_with_a_directory(tmp_path: Path) -> None:
    assert flight_recording(None) == []
    options = flight_recording(tmp_path / "run-1" / "jfr")
    where = tmp_path.resolve() / "run-1" / "jfr"
    assert options == [f"-XX:StartFlightRecording=filename={where}/,dumponexit=true"]
    assert (tmp_path / "run-1" / "jfr").is_dir()  # JFR writes one file per JVM into it
