"""The fault suite's evidence reads what a real broker holds: it is only read when a
test already failed, so it is tested here, where a wrong answer shows."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.worker.harness import create_topics, produce

from .batches import appended_twice, batch_evidence, read_batches
from .evidence import shortfall, skipped_markers, word_layers, word_records
from .resumes import resumes


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


def test_batches_say_who_wrote_each_and_find_one_appended_twice(kafka: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    topic = f"app-{tag}-counts-store-repartition"
    create_topics(kafka.bootstrap_servers, {topic: 1})
    producer = Producer(
        {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"t-{tag}"}
    )
    producer.init_transactions(30)
    for words in (["w0", "w1", "w2"], ["w1"]):
        producer.begin_transaction()
        for word in words:
            producer.produce(topic, key=word, value=word, partition=0)
        producer.commit_transaction(30)

    batches = read_batches(Path(kafka.data_dir), topic)

    data = [b for b in batches if not b.control]
    assert [(b.keys, b.sequences, b.transactional) for b in data] == [
        (("w0", "w1", "w2"), (0, 2), True),
        (("w1",), (3, 3), True),
    ], batches
    assert len({b.producer for b in data}) == 1
    assert data[0].producer[0] >= 0
    assert sum(b.control for b in batches) == 2  # each transaction's commit marker
    assert appended_twice(batches) == []
    said = batch_evidence(kafka, topic, "w1")
    assert said.endswith("w1 is in 2 batch(es) of 1 producer epoch(s): the records were "
                         "produced twice"), said  # fmt: skip
    again = replace(data[0], base_offset=data[1].base_offset + 2)
    assert appended_twice([*batches, again]) == [[data[0], again]]
    producer.close()


def test_resumes_name_a_start_below_an_earlier_commit_and_a_redelivery() -> None:
    def line(when: str, text: str, said: str = "INFO segue.worker.processing") -> str:
        return f"2026-11-30 03:55:{when} {said}: {text}"

    old = [
        line("40,000", "task 0_4 running (inputs [('text', 4)], from text[4]@100)"),
        line("45,500", "task 0_4: input committed up to text[4]@180"),
    ]
    new = [
        line("45,900", "task 0_4 running (inputs [('text', 4)], from text[4]@180)"),
        line(
            "46,100",
            "task 0_4: text[4]@181 delivered again (the task is at 185): dropped",
            "WARNING segue.worker.active",
        ),
        line("47,000", "task 0_4: input committed up to text[4]@200"),
        line("48,000", "task 0_4 running (inputs [('text', 4)], from text[4]@196)"),
    ]

    found = resumes([("wc-0", "\n".join(old)), ("wc-1", "\n".join(new))])

    assert found == [
        "2026-11-30 03:55:46,100 wc-1: WARNING segue.worker.active: task 0_4: text[4]@181 "
        "delivered again (the task is at 185): dropped",
        "2026-11-30 03:55:48,000 wc-1 0_4 started text[4] at 196, below 200 committed up "
        "to by 2026-11-30 03:55:47,000 wc-1 0_4",
    ]
    assert resumes([("wc-0", "\n".join(old)), ("wc-1", "\n".join(new[:1]))]) == []
