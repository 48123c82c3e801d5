"""The shared metadata read: one read answers every app for a second, a topic it lacks
forces a new one, and a failure is shared rather than waited out once per app."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from segue.operator.observe import metadata
from segue.operator.observe.metadata import MetadataUnavailable, SharedMetadata


class Reads:
    """What ``list_topics`` would answer, counting the calls."""

    def __init__(self) -> None:
        self.topics: dict[str, int] = {"in": 4}
        self.calls = 0
        self.down = False

    def __call__(self) -> Any:
        self.calls += 1
        if self.down:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        return SimpleNamespace(topics=dict(self.topics))


def test_one_read_answers_every_app_until_a_topic_is_missing(monkeypatch: Any) -> None:
    reads = Reads()
    shared = SharedMetadata(reads)
    assert shared.get({"in"}).topics == {"in": 4}
    for _ in range(50):  # fifty apps' looks within the second
        shared.get({"in"})
    assert reads.calls == 1
    reads.topics["in-changelog"] = 4  # a new app's topic: read again at once
    assert "in-changelog" in shared.get({"in", "in-changelog"}).topics
    assert reads.calls == 2
    monkeypatch.setattr(metadata, "FRESH", 0.05)
    time.sleep(0.06)
    shared.get({"in"})
    assert reads.calls == 3  # older than FRESH: read again


def test_a_failed_read_is_shared_then_retried() -> None:
    reads = Reads()
    shared = SharedMetadata(reads, lambda exc: exc.args[0].str())
    reads.down = True
    for _ in range(5):
        with pytest.raises(MetadataUnavailable, match="Local: Broker transport failure"):
            shared.get({"in"})
    assert reads.calls == 1
    reads.down = False
    time.sleep(metadata.FRESH + 0.05)
    assert shared.get({"in"}).topics == {"in": 4}
    assert reads.calls == 2
