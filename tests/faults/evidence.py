"""What the broker holds for a word whose exact counts failed: every record of it in
its partition read uncommitted, each marked with whether a committed reader sees it
too. An aborted count, a count never written and a count committed twice look the
same in the committed read alone; side by side they say which it was, in CI's output
where the broker's log is gone."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from segue.worker.kafka import Admin


def _read(bootstrap: str, topic: str, partition: int, isolation: str) -> dict[int, bytes]:
    """offset -> value of every record in the partition up to its end, at ``isolation``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"evidence-{isolation}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    out: dict[int, bytes] = {}
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        deadline = time.monotonic() + 60  # a partition of a test's size ends within seconds
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    break
                continue
            out[int(msg.offset() or 0)] = bytes(msg.key() or b"") + b"=" + bytes(msg.value() or b"")
    finally:
        consumer.close()
    return out


def word_records(bootstrap: str, topic: str, partition: int, word: str, limit: int = 40) -> str:
    """``word``'s counts in ``topic[partition]``, in offset order: ``count@offset``,
    with ``!`` after those a read_committed reader does not see (aborted or open)."""
    try:
        raw = _read(bootstrap, topic, partition, "read_uncommitted")
        seen = _read(bootstrap, topic, partition, "read_committed")
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read {topic}[{partition}]: {exc})"
    prefix = word.encode() + b"="
    marks = []
    for offset in sorted(raw):
        if raw[offset].startswith(prefix):
            count = int.from_bytes(raw[offset][len(prefix) :], "big", signed=True)
            marks.append(f"{count}@{offset}{'' if offset in seen else '!'}")
    aborted = [i for i, m in enumerate(marks) if m.endswith("!")]
    if aborted:  # the part that tells the story: from a little before the first abort
        marks = marks[max(0, aborted[0] - 3) :]
    return f"{word} in {topic}[{partition}] ('!': not committed): {' '.join(marks[:limit])}"


def shortfall(bootstrap: str, group: str, source: str, output: str) -> str:
    """Why a committed read of ``output`` came up short, once the broker serves: each
    output partition's last stable offset against its high watermark (a gap that
    stays is a transaction left open or hanging) and each input partition's offset
    committed by ``group`` against its end (a gap that stays is input not processed)."""
    try:
        admin = Admin(bootstrap, {})
        counts = admin.partition_counts()
        outs = [(output, p) for p in range(counts.get(output, 0))]
        ins = [(source, p) for p in range(counts.get(source, 0))]
        stable, high = admin.end_offsets(outs), admin.high_watermarks(outs + ins)
        reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        try:
            found = reader.committed([TopicPartition(t, p) for t, p in ins], timeout=10)
        finally:
            reader.close()
        done = {(tp.topic, tp.partition): tp.offset for tp in found}
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read the ends: {exc})"
    ends = [("stable", tp, stable.get(tp)) for tp in outs]
    ends += [("committed", tp, done.get(tp)) for tp in ins]
    lines = [f"{t}[{p}]: {what} {at} of {high.get((t, p))}" for what, (t, p), at in ends]
    # first, on one line, only the partitions with a gap: CI shows a failure's first lines
    gaps = [line for line, (_, tp, at) in zip(lines, ends, strict=True) if at != high.get(tp)]
    return f"gaps: {'; '.join(gaps) or 'none'}\n" + "\n".join(lines)


def word_layers(bootstrap: str, source: str, repartition: str, word: str) -> str:
    """Where a word counted once too often was doubled: its lines in the source
    (each line's key is its number, so a line written twice shows as a repeated key),
    and its records in the repartition topic committed and not. Input doubled, the
    split doubled it, or the count did: the first layer whose number is off says."""
    try:
        found = []
        counts = Admin(bootstrap, {}).partition_counts()
        for topic, isolation in ((source, "read_committed"), (repartition, "read_committed")):
            keys: list[bytes] = []
            every = 0
            for partition in range(counts.get(topic, 0)):
                records = _read(bootstrap, topic, partition, isolation)
                for record in records.values():
                    key, _, value = record.partition(b"=")
                    if value == word.encode():
                        every += 1
                        keys.append(key)
            repeated = len(keys) - len(set(keys)) if topic == source else 0
            what = f" ({repeated} line(s) twice)" if topic == source else ""
            found.append(f"{topic} ({isolation}): {every}{what}")
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read the layers: {exc})"
    return f"{word}'s records by layer: " + "; ".join(found)


SKIPPED = "while trying to send transaction markers for "


def skipped_markers(kafka: Any, ids: Sequence[str]) -> list[str]:
    """Transactions whose id starts with one of ``ids`` (an app's ``<app_id>-``, the
    test input's own) whose markers a broker skipped: a coordinator completing a
    transaction after its restart, before it knows the partitions' leaders, takes them
    for deleted and records the commit complete with no marker written (Kafka's
    TransactionMarkerChannelManager: "these partitions are likely deleted already and
    hence can be skipped"). A commit then
    lost on ``__consumer_offsets`` sends its task back over input whose output and
    state are already committed: counted twice, and nothing Segue did. Each found
    line, shortened to its time, transaction and partitions."""
    brokers = getattr(kafka, "nodes", [kafka])
    found = []
    for broker in brokers:
        log = Path(broker.workdir) / "server.log"
        if not log.exists():
            continue
        for line in log.read_text(errors="replace").splitlines():
            if SKIPPED in line and any(f"{SKIPPED}{i}" in line for i in ids if i):
                when = line[1:24]
                partitions = line.split("partitions ", 1)[1].split(" while", 1)[0]
                txn = line.split(SKIPPED, 1)[1].split(",", 1)[0]
                found.append(f"{when} {txn}: {partitions}")
    return found
