"""Unit tests of the example applications' processors, with an in-memory context."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.worker.apps import tally, windowed, wordcount
from segue.worker.processor import Record
from segue.worker.state.engine import Engine
from segue.worker.state.store import TaskStore
from segue.worker.topology import Topology


class FakeContext:
    def __init__(self, topology: Topology, sub: int, tmp: Path) -> None:
        self.stores = {
            s.name: TaskStore(s, f"cl-{s.name}", 0, Engine(tmp / s.name))
            for s in topology.get(sub).stores
        }
        self.sent: list[tuple[str, Any, Any]] = []

    task_id = "0_0"
    member = "test-0"

    def store(self, name: str) -> TaskStore:
        return self.stores[name]

    def send(self, sink: str, key: Any, value: Any, **_: Any) -> None:
        self.sent.append((sink, key, value))

    def done(self) -> None:
        for s in self.stores.values():
            s.accept_record()


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    return tmp_path


def record(key: Any, value: Any, timestamp: int = 0) -> Record:
    return Record(key=key, value=value, timestamp=timestamp, topic="t", partition=0, offset=0)


def test_wordcount_splits_and_counts(tmp: Path) -> None:
    app = wordcount.topology()
    split = FakeContext(app, 0, tmp / "0")
    wordcount.split(record(None, "The cat, the HAT!"), split)
    assert split.sent == [("counts-store", w, w) for w in ["the", "cat", "the", "hat"]]
    count = FakeContext(app, 1, tmp / "1")
    for _, key, _ in split.sent:
        wordcount.count(record(key, key), count)
        count.done()
    assert count.sent[-2:] == [("output", "the", 2), ("output", "hat", 1)]


def test_windowed_aggregates_expires_and_drops_late_records(tmp: Path) -> None:
    app = windowed.topology(size_ms=1000, grace_ms=500)
    ctx = FakeContext(app, 0, tmp)
    process = app.get(0).processor
    for key, ts, amount in [
        ("a", 100, 1),
        ("a", 900, 2),
        ("a", 1200, 5),
        ("b", 1600, 1),
        ("a", 300, 100),
        ("a", 2100, 1),
    ]:
        process(record(key, amount, ts), ctx)
        ctx.done()
    outputs = [(k, v["count"], v["sum"]) for _, k, v in ctx.sent]
    # ("a", 300) arrives at stream time 1600 >= window 0's end 1000 + grace 500: late.
    assert outputs == [
        ("a@0", 1, 1),
        ("a@0", 2, 3),
        ("a@1000", 1, 5),
        ("b@1000", 1, 1),
        ("a@2000", 1, 1),
    ]
    store = ctx.stores["windows"]
    assert store.get(windowed.LATE) == {"n": 1}
    # Window 0 (closed once stream time passed 1500) has been deleted.
    assert store.get(windowed._window_key(0, "a")) is None
    assert store.get(windowed._window_key(1000, "a")) == {"count": 1, "sum": 5}
    with pytest.raises(ValueError, match="JSON number"):
        process(record("a", "x", 2200), ctx)


def test_tally_stamps_who_counted(tmp: Path) -> None:
    app = tally.topology()
    ctx = FakeContext(app, 0, tmp)
    for _ in range(3):
        tally.tally(record("k", "v"), ctx)
        ctx.done()
    assert [v["count"] for _, _, v in ctx.sent] == [1, 2, 3]
    assert {v["by"] for _, _, v in ctx.sent} == {"test-0"}
    assert json.dumps(ctx.sent[0][2])


def test_tally_can_cost_time_per_record(tmp: Path) -> None:
    app = tally.topology(cost_ms="20")
    ctx = FakeContext(app, 0, tmp)
    started = time.monotonic()
    for _ in range(5):
        app.get(0).processor(record("k", "v"), ctx)
        ctx.done()
    assert time.monotonic() - started >= 0.1  # 5 records, 20 ms each
    assert [v["count"] for _, _, v in ctx.sent] == [1, 2, 3, 4, 5]
