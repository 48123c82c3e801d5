"""Unit tests of the worker's pure logic: task ids and partition mapping, the
generation diff, the assignment document, checkpoints, topic resolution, config."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue.worker import INT64, STRING, Topology
from segue.worker.assignment import (
    AssignmentDocument,
    AssignmentError,
    MemberTasks,
    decode_configmap,
    encode_document,
)
from segue.worker.config import from_sources
from segue.worker.plan import diff
from segue.worker.serdes import MalformedRecord
from segue.worker.state.checkpoint import Checkpoint, CorruptCheckpoint, decode, encode
from segue.worker.tasks import (
    Expansion,
    TaskId,
    copartitioning_error,
    source_partitions,
    task_for_partition,
)
from segue.worker.topics import resolve

# -- tasks --


def test_task_ids_parse_like_the_assignor() -> None:
    assert TaskId.parse("1_3") == TaskId(1, 3)
    assert str(TaskId(12, 0)) == "12_0"
    for bad in ("1-3", "01_3", "1_", "_1", "a_b", "1_2_3", ""):
        with pytest.raises(ValueError, match="malformed task id"):
            TaskId.parse(bad)


def test_source_partitions_without_and_with_expansion() -> None:
    assert source_partitions(TaskId(0, 1), 3, None) == [1]
    assert source_partitions(TaskId(0, 5), 3, None) == []
    assert source_partitions(TaskId(0, 1), 12, Expansion(6, 12)) == [1, 7]
    # Partitions the operator has not published yet are not read.
    assert source_partitions(TaskId(0, 1), 24, Expansion(6, 12)) == [1, 7]
    assert source_partitions(TaskId(0, 1), 8, Expansion(6, 12)) == [1, 7]


@given(st.integers(1, 16), st.integers(0, 4), st.integers(0, 15))
def test_every_partition_belongs_to_exactly_one_task(initial: int, factor: int, sub: int) -> None:
    current = initial * (factor + 1)
    expansion = Expansion(initial, current)
    owners: dict[int, TaskId] = {}
    for t in range(initial):
        for p in source_partitions(TaskId(sub, t), current, expansion):
            assert p not in owners
            owners[p] = TaskId(sub, t)
    assert sorted(owners) == list(range(current))
    assert all(task_for_partition(sub, p, expansion) == owner for p, owner in owners.items())


def test_copartitioning() -> None:
    assert copartitioning_error({"a": 3, "b": 3}) is None
    assert "a=3, b=4" in (copartitioning_error({"b": 4, "a": 3}) or "")


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


# -- the assignment document --


def _doc(**members: MemberTasks) -> AssignmentDocument:
    return AssignmentDocument(
        version=1,
        application_id="wc",
        generation=7,
        members=members,
        partition_map={"1": {"initial_partitions": 6, "current_partitions": 12}},
    )


def _configmap(doc: AssignmentDocument, generation: str | None = None) -> tuple[dict, dict]:
    data = {"generation": generation if generation is not None else str(doc.generation)}
    return data, {"assignment.json.gz": base64.b64encode(encode_document(doc)).decode()}


def test_document_round_trips_through_the_configmap() -> None:
    doc = _doc(**{"wc-0": MemberTasks(active=["0_0", "1_2"], standby=["1_0"])})
    decoded = decode_configmap(*_configmap(doc))
    assert decoded == doc
    assert decoded.roles_of("wc-0") == ({"0_0": "active", "1_2": "active", "1_0": "standby"}, [])
    assert decoded.roles_of("wc-9") == ({}, [])  # not listed: runs nothing
    assert decoded.expansions() == {1: Expansion(6, 12)}


def test_a_task_in_two_roles_is_a_conflict_not_a_guess() -> None:
    doc = _doc(**{"wc-0": MemberTasks(active=["0_0", "0_1"], learning=["0_1"])})
    assert doc.roles_of("wc-0") == ({"0_0": "active"}, ["0_1"])


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        ({"generation": "8"}, None),  # generations disagree (filled in below)
        ({"generation": "7"}, {}),
        ({"generation": "7"}, {"assignment.json.gz": "not base64!"}),
        ({"generation": "7"}, {"assignment.json.gz": base64.b64encode(b"not gzip").decode()}),
        (
            {"generation": "7"},
            {
                "assignment.json.gz": base64.b64encode(
                    gzip.compress(json.dumps({"version": 2}).encode())
                ).decode()
            },
        ),
    ],
)
def test_invalid_configmaps_are_rejected(data: dict, binary: dict | None) -> None:
    if binary is None:
        binary = _configmap(_doc())[1]
    with pytest.raises(AssignmentError):
        decode_configmap(data, binary)


# -- checkpoints --


def test_checkpoint_round_trip() -> None:
    checkpoint = Checkpoint("app-counts-changelog", 3, 12345)
    assert decode(encode(checkpoint)) == checkpoint


@given(st.data())
def test_any_damaged_checkpoint_byte_is_detected(data: st.DataObject) -> None:
    raw = bytearray(encode(Checkpoint("t", 1, 99)))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))
    with pytest.raises(CorruptCheckpoint):
        decode(bytes(raw))


# -- topology and topics --


def _wordcount() -> Topology:
    app = Topology("wc")
    text = app.topic("text", key=STRING, value=STRING)
    words = app.repartition("words", key=STRING, value=STRING)
    app.subtopology([text], lambda r, c: None, sinks=[words])
    app.subtopology(
        [words],
        lambda r, c: None,
        stores=[app.store("counts", STRING, INT64)],
        sinks=[app.topic("out", label="output")],
    )
    return app


def test_resolve_creates_internal_topics_sized_by_their_writer() -> None:
    res = resolve(_wordcount(), "wc", {"text": 6, "out": 3}, {})
    assert {t.name: t.partitions for t in res.create} == {
        "wc-words-repartition": 6,
        "wc-counts-changelog": 6,
    }
    assert res.subs[0].tasks == 6
    assert res.subs[1].tasks == 6
    assert next(t for t in res.create if t.name.endswith("changelog")).config == {
        "cleanup.policy": "compact"
    }


def test_resolve_refuses_subtopologies_it_cannot_run() -> None:
    assert resolve(_wordcount(), "wc", {"out": 3}, {}).subs[0].error.reason == "missing_topic"
    res = resolve(
        _wordcount(),
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
    assert resolve(_wordcount(), "wc", existing, {0: Expansion(6, 12)}).subs[0].tasks == 6
    grown = {**existing, "wc-words-repartition": 12}
    # No partition_map yet for the stateful sub-topology: keep 6 tasks, read 6 partitions.
    sub = resolve(_wordcount(), "wc", grown, {}).subs[1]
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
        "SEGUE_METRICS_PORT": "9500",
    }
    config = from_sources({"app": "m:o", "member": None, "metrics_port": 9600}, env)
    assert config.member == "wc-0"
    assert config.assignment_configmap == "wc-assignment"
    assert config.metrics_host == "127.0.0.5"  # never 0.0.0.0 when POD_IP is set
    assert config.metrics_port == 9600
    assert config.kafka == {"security.protocol": "ssl"}
    assert config.state_dir == Path("/var/lib/segue/state")
    assert config.processing_guarantee == "exactly_once"
    with pytest.raises(ValueError, match="MODULE:OBJECT"):
        from_sources({"app": "nocolon"}, env)
