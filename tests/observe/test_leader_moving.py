"""``KafkaView.offsets_answered`` asks a partition whose leader is moving again, and
only such a partition, for at most ``LEADER_WAIT`` seconds.

The broker's side of this (a new topic's "not leader" for a moment) is a race a real
broker shows only sometimes (``test_kafka_view.py`` asks a new topic at once); here an
admin client that answers as scripted makes the loop's every branch happen. The
``AdminClient`` under the view is real, pointed at a port where nothing listens, and
quiet about it (``log_level`` 0); no call reaches it."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import IsolationLevel, KafkaError, KafkaException, TopicPartition

from segue.operator.observe import KafkaView
from segue.operator.observe import kafka as observe_kafka

NOT_LEADER = KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)
UNKNOWN = KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)


class Answer:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class ScriptedAdmin:
    """``list_offsets`` answers each partition from its script, one entry per ask (an
    int is an offset, a KafkaError a refusal); the last entry repeats."""

    def __init__(self, script: dict[tuple[str, int], list[int | KafkaError]]) -> None:
        self.script = script
        self.asked: list[list[tuple[str, int]]] = []

    def list_offsets(self, request: dict[TopicPartition, Any], **_: Any) -> dict[Any, Any]:
        self.asked.append(sorted((tp.topic, tp.partition) for tp in request))
        out: dict[Any, Any] = {}
        for tp in request:
            steps = self.script[(tp.topic, tp.partition)]
            step = steps.pop(0) if len(steps) > 1 else steps[0]
            future: Future[Any] = Future()
            if isinstance(step, KafkaError):
                future.set_exception(KafkaException(step))
            else:
                future.set_result(Answer(step))
            out[tp] = future
        return out

    def poll(self, _: float) -> int:
        return 0


@pytest.fixture
def view() -> Any:
    with KafkaView("127.0.0.1:1", {"log_level": "0"}, timeout=5.0) as v:
        yield v


def ask(view: KafkaView, admin: ScriptedAdmin, partitions: dict[str, int]) -> Any:
    view._admin = admin  # type: ignore[assignment]
    return view.offsets_answered(partitions, "latest", IsolationLevel.READ_COMMITTED, "end")


def test_a_partition_whose_leader_is_moving_is_asked_again_alone(view: KafkaView) -> None:
    admin = ScriptedAdmin({("t", 0): [7], ("t", 1): [NOT_LEADER, NOT_LEADER, 3]})
    out, failed = ask(view, admin, {"t": 2})
    assert (out, failed) == ({("t", 0): 7, ("t", 1): 3}, {})
    assert admin.asked == [[("t", 0), ("t", 1)], [("t", 1)], [("t", 1)]]


def test_other_refusals_are_not_asked_again(view: KafkaView) -> None:
    admin = ScriptedAdmin({("t", 0): [UNKNOWN], ("t", 1): [5]})
    out, failed = ask(view, admin, {"t": 2})
    assert out == {("t", 1): 5}
    assert list(failed) == [("t", 0)]
    assert len(admin.asked) == 1


def test_a_leader_that_stays_away_is_said_after_the_wait(
    view: KafkaView, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(observe_kafka, "LEADER_WAIT", 0.5)
    admin = ScriptedAdmin({("t", 0): [NOT_LEADER]})
    out, failed = ask(view, admin, {"t": 1})
    assert out == {}
    assert "not leader" in failed[("t", 0)].lower()
    # asked every LEADER_RETRY until the wait ran out, no more
    assert 3 <= len(admin.asked) <= 0.5 / observe_kafka.LEADER_RETRY + 1
