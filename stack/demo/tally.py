"""The show's ledger: every committed output record, what was sent, and from both the
numbers the JSON line reports (records lost and duplicated, each handover's pause).

:class:`OutputReader` reads the output topic ``read_committed`` for the whole run. The
output topic is created with ``message.timestamp.type=LogAppendTime``, so each
record's timestamp is when the broker appended it: when a worker produced it.

WordCount writes ``word -> count``: under exactly-once the counts committed for a word
are exactly 1..n for n lines of it (:func:`exactness`: a missing count is a lost
record, a repeated or too high one a duplicate). A counting task (``1_p``) writes
output partition ``p`` only (the worker's murmur2 partitioner, the same partition
count), so a task's output is one partition, and a handover's pause is the longest gap
in that partition that begins in the window around the handover the monitor saw
(:func:`pause`): from the old owner's last record to the new owner's first. The old
owner's last record is appended before the new owner fences it and runs, so the gap
begins between a second before the last look with the old owner running the task and
the first look with the new one; a gap of ordinary traffic there can only make the
figure larger, never smaller.

Pure functions apart from the reader, so a soak run can reuse them on its own input.
"""

from __future__ import annotations

import bisect
import math
import threading
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from segue.stack.demo.monitor import Move

WINDOW = 1.0  # seconds before the last look with the old owner running the task
SLACK = 0.2  # seconds after the first look with the new owner running it


@dataclass(frozen=True)
class Out:
    partition: int
    at: float  # LogAppendTime, seconds
    word: str
    count: int


class OutputReader(threading.Thread):
    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__(daemon=True, name="demo-output")
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self.records: list[Out] = []
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": self.group,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        try:
            parts = consumer.list_topics(self.topic, timeout=10).topics[self.topic].partitions
            consumer.assign([TopicPartition(self.topic, p, 0) for p in parts])
            while not self.stopped.is_set():
                for msg in consumer.consume(1000, timeout=0.2):
                    if msg.error():
                        continue
                    out = Out(
                        int(msg.partition() or 0),
                        msg.timestamp()[1] / 1000,
                        (msg.key() or b"").decode(),
                        int.from_bytes(msg.value() or b"", "big", signed=True),
                    )
                    with self.lock:
                        self.records.append(out)
        finally:
            consumer.close()

    def count(self) -> int:
        with self.lock:
            return len(self.records)

    def stop(self) -> list[Out]:
        self.stopped.set()
        self.join(30)
        with self.lock:
            return list(self.records)


def merge(*sent: dict[str, int]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in sent:
        for word, n in part.items():
            total[word] = total.get(word, 0) + n
    return total


def exactness(records: list[Out], sent: dict[str, int]) -> tuple[int, int]:
    """(lost, duplicated): counts 1..n expected per word of ``sent``."""
    seen: dict[str, list[int]] = {}
    for r in records:
        seen.setdefault(r.word, []).append(r.count)
    lost = duplicated = 0
    for word in set(seen) | set(sent):
        n, counts = sent.get(word, 0), seen.get(word, [])
        distinct = {c for c in counts if 1 <= c <= n}
        lost += n - len(distinct)
        duplicated += len(counts) - len(distinct)
    return lost, duplicated


def by_partition(records: list[Out]) -> dict[int, list[float]]:
    times: dict[int, list[float]] = {}
    for r in records:
        times.setdefault(r.partition, []).append(r.at)
    return {p: sorted(ts) for p, ts in times.items()}


def pause(move: Move, times: list[float]) -> float | None:
    """Seconds of the longest output gap starting in the move's window, or None when
    the task wrote nothing there (no input reached it)."""
    start = bisect.bisect_left(times, move.before - WINDOW)
    end = bisect.bisect_right(times, move.seen + SLACK)
    gaps = [times[i + 1] - times[i] for i in range(start, min(end, len(times) - 1))]
    return max(gaps) if gaps else None


def pauses(moves: list[Move], records: list[Out]) -> list[tuple[Move, float]]:
    """Each move of a counting task with its pause (moves of other tasks have no
    output of their own to measure)."""
    times = by_partition(records)
    found = []
    for move in moves:
        sub, _, part = move.task.partition("_")
        if sub != "1" or int(part) not in times:
            continue
        gap = pause(move, times[int(part)])
        if gap is not None:
            found.append((move, gap))
    return found


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least ``q`` of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0.0


def summary(
    moves: list[Move], records: list[Out], sent: dict[str, int], **extra: Any
) -> dict[str, Any]:
    """The JSON line's figures."""
    lost, duplicated = exactness(records, sent)
    measured = pauses(moves, records)
    ms = [gap * 1000 for _, gap in measured]
    return {
        "handovers": len(measured),
        "failovers": sum(1 for m, _ in measured if m.failover),
        "max_pause_ms": round(max(ms), 1) if ms else 0.0,
        "p50_pause_ms": round(percentile(ms, 0.5), 1),
        "p99_pause_ms": round(percentile(ms, 0.99), 1),
        "max_handover_pause_ms": round(
            max((g * 1000 for m, g in measured if not m.failover), default=0.0), 1
        ),
        "records_sent": sum(sent.values()),
        "records_out": len(records),
        "records_lost": lost,
        "records_duplicated": duplicated,
        **extra,
    }
