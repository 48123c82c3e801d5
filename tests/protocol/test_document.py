"""The assignment document: round trip through its ConfigMap, conflicts, bad input, and
the explicit version check on both ends."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from segue.operator.scaling import Published, Roles, from_document, to_document
from segue.protocol import (
    AssignmentDocument,
    DocumentError,
    Expansion,
    MemberRoles,
    UnsupportedVersion,
    decode,
    decode_configmap,
    encode,
)
from segue.protocol.document import configmap_data


def _doc(**members: MemberRoles) -> AssignmentDocument:
    return AssignmentDocument(
        version=1,
        application_id="wc",
        generation=7,
        members=members,
        partition_map={"1": {"initial_partitions": 6, "current_partitions": 12}},
    )


def _configmap(doc: AssignmentDocument, generation: str | None = None) -> tuple[dict, dict]:
    data = {"generation": generation if generation is not None else str(doc.generation)}
    return data, {"assignment.json.gz": base64.b64encode(encode(doc)).decode()}


def test_document_round_trips_through_the_configmap() -> None:
    doc = _doc(**{"wc-0": MemberRoles(active=["0_0", "1_2"], standby=["1_0"])})
    decoded = decode_configmap(*_configmap(doc))
    assert decoded == doc
    assert decoded.roles_of("wc-0") == ({"0_0": "active", "1_2": "active", "1_0": "standby"}, [])
    assert decoded.roles_of("wc-9") == ({}, [])  # not listed: runs nothing
    assert decoded.expansions() == {1: Expansion(6, 12)}


def test_a_task_in_two_roles_is_a_conflict_not_a_guess() -> None:
    doc = _doc(**{"wc-0": MemberRoles(active=["0_0", "0_1"], learning=["0_1"])})
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
    with pytest.raises(DocumentError):
        decode_configmap(data, binary)


def test_configmap_data_is_what_decode_configmap_reads() -> None:
    doc = _doc(**{"wc-0": MemberRoles(active=["0_0"])})
    assert decode_configmap(*configmap_data(doc.generation, encode(doc))) == doc


def test_encoding_is_deterministic_and_compact() -> None:
    a = _doc(**{"wc-1": MemberRoles(standby=["0_1"]), "wc-0": MemberRoles(active=["0_0"])})
    b = _doc(**{"wc-0": MemberRoles(active=["0_0"]), "wc-1": MemberRoles(standby=["0_1"])})
    assert encode(a) == encode(b)
    assert b" " not in gzip.decompress(encode(a))


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_a_version_this_code_does_not_know_is_refused_before_anything_else(
    version: object,
) -> None:
    raw = {"version": version, "application_id": "wc", "generation": 1, "members": {}}
    with pytest.raises(UnsupportedVersion, match="version") as refused:
        decode(gzip.compress(json.dumps(raw).encode()))
    assert refused.value.version == version


def test_the_writer_only_writes_its_own_version() -> None:
    with pytest.raises(ValueError, match="version"):
        AssignmentDocument.model_validate(
            {"version": 2, "application_id": "wc", "generation": 1, "members": {}}
        )


def test_fields_a_reader_does_not_know_are_ignored_within_a_version() -> None:
    raw = {"version": 1, "application_id": "wc", "generation": 3, "members": {}, "new": 1}
    assert decode(gzip.compress(json.dumps(raw).encode())).generation == 3


def test_the_decision_cores_generation_round_trips() -> None:
    published = Published(
        4,
        {"wc-0": Roles(("0_0",), ("0_1",)), "wc-1": Roles((), (), ("0_0",))},
        {1: Expansion(6, 12)},
    )
    document = to_document(published, "wc")
    assert decode(encode(document)) == document
    assert from_document(document) == published
