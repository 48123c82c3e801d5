"""Unit tests of the worker's pure logic: the generation diff, checkpoints, topic
resolution, config. Task ids and the assignment document are tests/protocol's."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from confluent_kafka import KafkaError
from hypothesis import given
from hypothesis import strategies as st

from segue.protocol.tasks import Expansion
from segue.worker import INT64, STRING, Topology
from segue.worker.config import from_sources
from segue.worker.diff import diff
from segue.worker.failures import unapplied
from segue.worker.kafka import is_fenced
from segue.worker.serdes import MalformedRecord
from segue.worker.state.checkpoint import Checkpoint, CorruptCheckpoint, decode, encode
from segue.worker.topics import first_topics, resolve

from .apps import wordcount_shape

# -- plan --


def test_diff_starts_and_stops_only_what_changes() -> None:
    plan = diff(
        {"0_0": "active", "0_1": "standby", "0_2": "learning", "0_3": "active", "0_4": "active"},
        {"0_0": "active", "0_1": "active", "0_2": "standby", "0_3": "learning", "0_5": "standby"},
    )
    assert plan.stop == ["0_4"]
    assert plan.promote == ["0_1"]
    assert plan.relabel == {"0_2": "standby"}
    assert plan.demote == {"0_3": "learning"}
    assert plan.start == {"0_5": "standby"}
    assert diff({"0_0": "active"}, {"0_0": "active"}).empty


roles = st.dictionaries(
    st.sampled_from([f"{s}_{p}" for s in range(2) for p in range(4)]),
    st.sampled_from(["active", "standby", "learning"]),
)


@given(roles, roles)
def test_applying_a_plan_yields_the_desired_roles(current: dict, desired: dict) -> None:
    plan = diff(current, desired)
    state = dict(current)
    for t in plan.stop:
        del state[t]
    state.update(plan.demote)
    state.update(plan.relabel)
    state.update({t: "active" for t in plan.promote})
    state.update(plan.start)
    assert state == desired
    touched = (
        set(plan.stop) | set(plan.demote) | set(plan.relabel) | set(plan.promote) | set(plan.start)
    )
    assert touched == {t for t in set(current) | set(desired) if current.get(t) != desired.get(t)}


# -- checkpoints --


def test_checkpoint_round_trip() -> None:
    checkpoint = Checkpoint("app-counts-changelog", 3, 12345, records=800, nbytes=11_200)
    assert decode(encode(checkpoint)) == checkpoint


def test_a_checkpoint_from_before_the_totals_counts_from_zero() -> None:
    payload = b'{"offset":7,"partition":0,"topic":"t"}'
    raw = b"SGC1" + struct.pack(">I", zlib.crc32(payload)) + payload
    assert decode(raw) == Checkpoint("t", 0, 7, records=0, nbytes=0)


@given(st.data())
def test_any_damaged_checkpoint_byte_is_detected(data: st.DataObject) -> None:
    raw = bytearray(encode(Checkpoint("t", 1, 99)))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))
    with pytest.raises(CorruptCheckpoint):
        decode(bytes(raw))


# -- topology and topics --


def test_resolve_creates_internal_topics_sized_by_their_writer() -> None:
    res = resolve(wordcount_shape(), "wc", {"text": 6, "out": 3}, {})
    assert {t.name: t.partitions for t in res.create} == {
        "wc-words-repartition": 6,
        "wc-counts-changelog": 6,
    }
    assert res.subs[0].tasks == 6
    assert res.subs[1].tasks == 6
    assert next(t for t in res.create if t.name.endswith("changelog")).config == {
        "cleanup.policy": "compact"
    }


def test_a_new_application_makes_its_internal_topics_before_its_first_generation() -> None:
    made = first_topics(wordcount_shape(), "wc", {"text": 6, "out": 3})
    assert {t.name: t.partitions for t in made} == {
        "wc-words-repartition": 6,
        "wc-counts-changelog": 6,
    }
    # Sources missing: nothing to size the topics by, nothing made.
    assert first_topics(wordcount_shape(), "wc", {"out": 3}) == []
    # State exists: the generation's partition map sizes what is missing, not the start.
    grown = {"text": 12, "out": 3, "wc-counts-changelog": 6}
    assert first_topics(wordcount_shape(), "wc", grown) == []
    assert resolve(wordcount_shape(), "wc", grown, {}).create  # a generation would make it


def test_resolve_refuses_subtopologies_it_cannot_run() -> None:
    assert resolve(wordcount_shape(), "wc", {"out": 3}, {}).subs[0].error.reason == "missing_topic"
    res = resolve(
        wordcount_shape(),
        "wc",
        {"text": 6, "out": 3, "wc-words-repartition": 6, "wc-counts-changelog": 8},
        {},
    )
    assert res.subs[1].error is not None
    assert res.subs[1].error.reason == "changelog_partitions"
    app = Topology("j")
    app.subtopology([app.topic("a"), app.topic("b")], lambda r, c: None)
    assert resolve(app, "j", {"a": 2, "b": 3}, {}).subs[0].error.reason == "copartitioning"


def test_an_expansion_keeps_the_task_count() -> None:
    existing = {"text": 12, "out": 3, "wc-words-repartition": 6, "wc-counts-changelog": 6}
    assert resolve(wordcount_shape(), "wc", existing, {0: Expansion(6, 12)}).subs[0].tasks == 6
    grown = {**existing, "wc-words-repartition": 12}
    # No partition_map yet for the stateful sub-topology: keep 6 tasks, read 6 partitions.
    sub = resolve(wordcount_shape(), "wc", grown, {}).subs[1]
    assert (sub.tasks, sub.error) == (6, None)


def test_topology_declarations_are_checked() -> None:
    app = Topology("x")
    with pytest.raises(ValueError, match="no source"):
        app.subtopology([], lambda r, c: None)
    with pytest.raises(ValueError, match="no earlier sub-topology writes"):
        app.subtopology([app.repartition("r")], lambda r, c: None)
    store = app.store("s")
    app.subtopology([app.topic("a")], lambda r, c: None, stores=[store])
    with pytest.raises(ValueError, match="belongs to another"):
        app.subtopology([app.topic("b")], lambda r, c: None, stores=[store])
    with pytest.raises(ValueError, match="on_error"):
        app.subtopology([app.topic("c")], lambda r, c: None, on_error="ignore")


def test_serdes_refuse_malformed_bytes() -> None:
    assert INT64.deserialize(INT64.serialize(-5)) == -5
    with pytest.raises(MalformedRecord):
        INT64.deserialize(b"abc")
    with pytest.raises(MalformedRecord):
        STRING.deserialize(b"\xff\xfe")


# -- config --


def test_flags_override_environment_over_defaults() -> None:
    env = {
        "POD_NAME": "wc-0",
        "POD_NAMESPACE": "ns",
        "POD_IP": "127.0.0.5",
        "SEGUE_STREAMAPP": "wc",
        "SEGUE_BOOTSTRAP_SERVERS": "k:9092",
        "SEGUE_KAFKA_SECURITY_PROTOCOL": "ssl",
        "SEGUE_KAFKA_CALL_BOUND": "7",  # the worker's own setting, not a librdkafka one
        "SEGUE_METRICS_PORT": "9500",
    }
    config = from_sources({"app": "m:o", "member": None, "metrics_port": 9600}, env)
    assert config.member == "wc-0"
    assert config.assignment_configmap == "wc-assignment"
    assert config.metrics_host == "127.0.0.5"  # never 0.0.0.0 when POD_IP is set
    assert config.metrics_port == 9600
    assert config.kafka == {"security.protocol": "ssl"}
    assert config.kafka_call_bound == 7.0
    assert config.state_dir == Path("/var/lib/segue/state")
    assert config.processing_guarantee == "exactly_once"
    with pytest.raises(ValueError, match="MODULE:OBJECT"):
        from_sources({"app": "nocolon"}, env)


def test_a_generation_not_applied_says_why_for_the_tasks_not_running() -> None:
    roles = {"0_0": "active", "0_1": "standby", "1_0": "active"}
    causes = unapplied(roles, owned=["1_0"], generation=3, why="SASL authentication error")
    assert sorted(causes) == ["0_0", "0_1"]  # 1_0 runs on: not reported
    role, cause = causes["0_1"]
    assert role == "standby"
    assert cause.reason == "StartFailed"
    assert cause.message == "generation 3 not applied: SASL authentication error"


def test_an_acl_refusal_is_retried_not_taken_for_a_fence() -> None:
    """librdkafka makes a refused transactional id fatal; no newer owner exists, so the
    task must retry (and start once the ACL is granted), not stay down as fenced."""
    refused = KafkaError(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, fatal=True)
    assert not is_fenced(refused)
    assert is_fenced(KafkaError(KafkaError.PRODUCER_FENCED))
    assert is_fenced(KafkaError(KafkaError._FATAL, fatal=True))
