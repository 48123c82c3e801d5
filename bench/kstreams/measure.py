"""The numbers both sides are measured by, from their topics alone (no app's own view).

A :class:`TopicReader` follows a topic as a downstream consumer does (read_committed, a
10 ms fetch wait) and stamps each record with the wall-clock time it became visible. Both
WordCounts write ``word -> count`` (int64); the input has one word a line, keyed by the
word, so every occurrence of a word sits in one input partition in order and the count
``n`` answers the word's ``n``-th line: its input timestamp is known exactly.

- ``late``: output visible more than :data:`LATE_AFTER` seconds after its input record's
  timestamp (the producer's clock; one machine, one clock).
- ``pause``: per counting task (= output partition: both sides partition the repartition
  and output topics by murmur2 of the word), the longest gap between consecutive visible
  outputs, for gaps that end after the scale request.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, TopicPartition

LATE_AFTER = 1.0


@dataclass(frozen=True)
class Seen:
    partition: int
    key: bytes
    value: bytes
    timestamp: float  # the record's own timestamp, Unix seconds
    visible: float  # when the reader got it, Unix seconds


class TopicReader(threading.Thread):
    """Reads every committed record of a topic from the start until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-reader-{uuid.uuid4().hex[:8]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,
            }
        )
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.records: list[Seen] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                for msg in self.consumer.consume(10000, 0.05):
                    now = time.time()
                    err = msg.error()
                    if err is not None:
                        assert err.code() == KafkaError._PARTITION_EOF, err
                        continue
                    self.records.append(
                        Seen(
                            msg.partition() or 0,
                            msg.key() or b"",
                            msg.value() or b"",
                            msg.timestamp()[1] / 1000,
                            now,
                        )
                    )
        finally:
            self.consumer.close()

    def wait_for(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.records) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.records)} of {count} records in {timeout:.0f}s")
            time.sleep(0.2)

    def stop(self) -> list[Seen]:
        self.stopped.set()
        self.join(30)
        return list(self.records)


def input_times(inputs: list[Seen]) -> dict[bytes, list[float]]:
    """Each word's line timestamps in the order its partition holds them."""
    times: dict[bytes, list[float]] = {}
    for record in inputs:  # a reader appends each partition's records in offset order
        times.setdefault(record.key, []).append(record.timestamp)
    return times


@dataclass(frozen=True)
class Lateness:
    late: int  # outputs visible more than LATE_AFTER s after their input
    counted: int  # outputs whose input was written in the window
    pauses: dict[int, tuple[float, float]]  # task (output partition) -> longest gap, its end


def lateness(
    outputs: list[Seen], times: dict[bytes, list[float]], start: float, scaled: float, end: float
) -> Lateness:
    """Late outputs among inputs written in [scaled, end]; pauses over outputs of inputs
    written from ``start`` (steady input began) to ``end``, gaps ending after ``scaled``."""
    late = counted = 0
    visible: dict[int, list[float]] = {}
    for out in outputs:
        n = int.from_bytes(out.value, "big", signed=True)
        written = times[out.key][n - 1]
        if start <= written <= end:
            visible.setdefault(out.partition, []).append(out.visible)
        if scaled <= written <= end:
            counted += 1
            late += out.visible - written > LATE_AFTER
    pauses = {}
    for task, seen in visible.items():
        seen.sort()
        gaps = [(b - a, b) for a, b in itertools.pairwise(seen) if b >= scaled]
        pauses[task] = max(gaps, default=(0.0, scaled))
    return Lateness(late, counted, pauses)


def record_bytes(changelog: list[Seen]) -> dict[int, float]:
    """Mean key+value bytes of a changelog record, per partition."""
    sums: dict[int, list[int]] = {}
    for r in changelog:
        acc = sums.setdefault(r.partition, [0, 0])
        acc[0] += len(r.key) + len(r.value)
        acc[1] += 1
    return {p: total / n for p, (total, n) in sums.items()}


def read_all(bootstrap: str, topic: str, partitions: int, timeout: float = 120.0) -> list[Seen]:
    """Every committed record of ``topic`` as it is now, each partition in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-read-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    left, records = set(range(partitions)), []
    deadline = time.monotonic() + timeout
    try:
        while left:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}: partitions {sorted(left)} not read in {timeout}s")
            for msg in consumer.consume(10000, 0.5):
                err = msg.error()
                if err is not None:
                    assert err.code() == KafkaError._PARTITION_EOF, err
                    left.discard(msg.partition())
                    continue
                ts = msg.timestamp()[1] / 1000
                records.append(
                    Seen(msg.partition() or 0, msg.key() or b"", msg.value() or b"", ts, ts)
                )
    finally:
        consumer.close()
    return records
