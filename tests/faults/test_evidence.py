"""The fault suite's evidence reads what a real broker holds: it is only read when a
test already failed, so it is tested here, where a wrong answer shows."""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.worker.harness import create_topics, produce

from .evidence import shortfall, skipped_markers, word_layers, word_records


def test_word_layers_names_a_line_written_twice_and_reads_past_the_first_records(
    kafka: Any,
) -> None:
    tag = uuid.uuid4().hex[:8]
    source, repartition = f"text-{tag}", f"app-{tag}-counts-store-repartition"
    create_topics(kafka.bootstrap_servers, {source: 2, repartition: 2})
    lines = [(str(i), f"w{i % 3}") for i in range(900)]  # 300 of each word
    produce(kafka.bootstrap_servers, source, [*lines, ("4", "w1")])  # line 4 again
    produce(kafka.bootstrap_servers, repartition, [(w, w) for _, w in lines])

    said = word_layers(kafka.bootstrap_servers, source, repartition, "w1")

    assert f"{source} (read_committed): 301 (1 line(s) twice)" in said, said
    assert f"{repartition} (read_committed): 300" in said, said
    other = word_layers(kafka.bootstrap_servers, source, repartition, "w2")
    assert f"{source} (read_committed): 300 (0 line(s) twice)" in other, other


def test_word_records_reads_every_count_and_marks_the_uncommitted(kafka: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    output = f"counts-{tag}"
    create_topics(kafka.bootstrap_servers, {output: 1})
    value = lambda n: n.to_bytes(8, "big", signed=True)  # noqa: E731
    produce(kafka.bootstrap_servers, output, [("w0", value(n)) for n in range(1, 301)])
    producer = Producer(
        {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"t-{tag}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(output, key="w0", value=value(301), partition=0)
    producer.flush(30)  # left open: a read_committed reader stops before it

    said = word_records(kafka.bootstrap_servers, output, 0, "w0", limit=1000)

    assert "300@299 " in said, said[-200:]
    assert said.endswith("301@300!"), said[-200:]
    producer.abort_transaction(30)


def test_shortfall_names_only_the_partitions_with_a_gap(kafka: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    source, output, group = f"in-{tag}", f"out-{tag}", f"app-{tag}"
    create_topics(kafka.bootstrap_servers, {source: 2, output: 1})
    produce(kafka.bootstrap_servers, source, [(str(i), "x") for i in range(40)])
    produce(kafka.bootstrap_servers, output, [("x", "1")])
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": group})
    ends = {p: consumer.get_watermark_offsets(TopicPartition(source, p), 10)[1] for p in (0, 1)}
    consumer.commit(
        offsets=[TopicPartition(source, 0, ends[0]), TopicPartition(source, 1, ends[1] - 1)],
        asynchronous=False,
    )
    consumer.close()

    said = shortfall(kafka.bootstrap_servers, group, source, output)

    first = said.splitlines()[0]
    assert first == f"gaps: {source}[1]: committed {ends[1] - 1} of {ends[1]}", said


# A line Kafka 4.3.1 wrote in a run of test_signal_outage (docs/reliability.md)
SKIPPED_LINE = (
    "[2026-11-26 17:30:29,665] INFO [Transaction Marker Channel Manager 1]: Couldn't find "
    "leader endpoint for partitions Set(__consumer_offsets-0, tally-c87975-counts-changelog-4, "
    "out-c87975-4) while trying to send transaction markers for tally-c87975-0_4, these "
    "partitions are likely deleted already and hence can be skipped "
    "(kafka.coordinator.transaction.TransactionMarkerChannelManager)"
)


def test_skipped_markers_names_this_runs_transactions_from_every_brokers_log(
    tmp_path: Path,
) -> None:
    nodes = [SimpleNamespace(workdir=tmp_path / f"kafka-{i}") for i in (1, 2)]
    for node in nodes:
        node.workdir.mkdir()
    other = SKIPPED_LINE.replace("tally-c87975-0_4", "other-app-0_1")
    (nodes[1].workdir / "server.log").write_text(f"started\n{other}\n{SKIPPED_LINE}\n")
    cluster = SimpleNamespace(nodes=nodes)

    found = skipped_markers(cluster, ["tally-c87975-", ""])

    assert found == [
        "2026-11-26 17:30:29,665 tally-c87975-0_4: Set(__consumer_offsets-0, "
        "tally-c87975-counts-changelog-4, out-c87975-4)"
    ]
    assert skipped_markers(nodes[0], ["tally-c87975-"]) == []  # one broker, no log yet
