"""The assignment document: what the operator publishes and every worker obeys.

One ConfigMap per StreamApp (:func:`~.names.assignment_configmap`) holds the generation
in ``data["generation"]`` and the gzipped JSON document in ``binaryData[DOCUMENT_KEY]``
(docs/protocol.md). Both ends check the version explicitly: :func:`encode` writes only
a version this code knows, and :func:`decode` raises :class:`UnsupportedVersion` for
any other before reading a field, so a worker never half-understands a newer operator
(it keeps running its last assignment and says so) and an operator never publishes
over a document it cannot read. Encoding is deterministic (sorted keys, ``mtime=0``):
the same document always gives the same bytes, so its size can be judged before it is
written.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from segue.protocol import gzjson
from segue.protocol.kstreams import KafkaStreamsAnswer
from segue.protocol.tasks import Expansion

DOCUMENT_VERSION: Final = 1
"""The version this code writes; the only one it reads."""
DOCUMENT_KEY: Final = "assignment.json.gz"
GENERATION_KEY: Final = "generation"
MAX_DOCUMENT_BYTES: Final = 900 * 1024  # a ConfigMap holds 1 MiB; leave room for the rest

Role = Literal["active", "standby", "learning"]
ROLES: Final[tuple[Role, ...]] = ("active", "standby", "learning")


class DocumentError(ValueError):
    """Bytes that are not a valid assignment document."""


class UnsupportedVersion(DocumentError):
    """A document of a version this code does not know (written by a newer operator?)."""

    def __init__(self, version: object) -> None:
        super().__init__(
            f"assignment document version {version!r} is not supported "
            f"(this Segue reads version {DOCUMENT_VERSION})"
        )
        self.version = version


class _Model(BaseModel):
    # Fields a reader does not know are ignored; anything incompatible bumps the version.
    model_config = ConfigDict(extra="ignore", frozen=True)


class MemberRoles(_Model):
    """What one member runs, by role (task ids)."""

    active: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()
    learning: tuple[str, ...] = ()


class PartitionMapEntry(_Model):
    """A sub-topology whose sources grew: ``initial_partitions`` tasks read ``current``."""

    initial_partitions: int = Field(ge=1)
    current_partitions: int = Field(ge=1)

    @model_validator(mode="after")
    def _grows(self) -> PartitionMapEntry:
        if self.current_partitions < self.initial_partitions:
            raise ValueError("current_partitions < initial_partitions")
        return self


class AssignmentDocument(_Model):
    version: Literal[1] = DOCUMENT_VERSION
    application_id: str = Field(min_length=1)
    generation: int = Field(ge=0)
    members: dict[str, MemberRoles]
    """Every member the operator manages, even with nothing to run."""
    partition_map: dict[str, PartitionMapEntry] = Field(default_factory=dict)
    """Only sub-topologies whose source topics were expanded, by sub-topology number."""
    kafka_streams: KafkaStreamsAnswer | None = None
    """For ``runtime: kafka-streams`` only: what the plugin maps the members with."""

    @model_validator(mode="after")
    def _numbered(self) -> AssignmentDocument:
        for key in self.partition_map:
            if not key.isdigit():
                raise ValueError(f"partition_map key {key!r} is not a sub-topology number")
        return self

    def roles_of(self, member: str) -> tuple[dict[str, Role], list[str]]:
        """``({task: role}, [tasks listed in more than one role])`` for ``member``.

        A member that is not listed runs nothing. A task listed twice for one member
        is a conflict: it is reported and left out, never guessed.
        """
        tasks = self.members.get(member)
        if tasks is None:
            return {}, []
        roles: dict[str, Role] = {}
        conflicts: set[str] = set()
        for role in ROLES:
            for task in getattr(tasks, role):
                if task in roles:
                    conflicts.add(task)
                roles[task] = role
        for task in conflicts:
            del roles[task]
        return roles, sorted(conflicts)

    def expansions(self) -> dict[int, Expansion]:
        """``partition_map`` keyed by sub-topology number."""
        return {
            int(key): Expansion(entry.initial_partitions, entry.current_partitions)
            for key, entry in self.partition_map.items()
        }


def encode(document: AssignmentDocument) -> bytes:
    """Gzipped compact JSON; the same document always gives the same bytes."""
    if document.version != DOCUMENT_VERSION:  # pragma: no cover - the model allows only 1
        raise UnsupportedVersion(document.version)
    fields = document.model_dump(mode="json", exclude={"partition_map", "kafka_streams"})
    for optional in ("partition_map", "kafka_streams"):  # absent when empty: same bytes as before
        if getattr(document, optional):
            fields[optional] = document.model_dump(mode="json", include={optional})[optional]
    return gzjson.dumps(fields)


def decode(blob: bytes) -> AssignmentDocument:
    """The document in ``blob``; :class:`UnsupportedVersion` before anything else is read."""
    raw = gzjson.loads(blob, DOCUMENT_KEY, DocumentError)
    if raw.get("version") != DOCUMENT_VERSION:
        raise UnsupportedVersion(raw.get("version"))
    try:
        return AssignmentDocument.model_validate(raw)
    except ValidationError as exc:
        raise DocumentError(f"{DOCUMENT_KEY}: not a valid assignment document: {exc}") from exc


def configmap_data(generation: int, blob: bytes) -> tuple[dict[str, str], dict[str, str]]:
    r"""``(data, binaryData)`` of the assignment ConfigMap, as the API takes them, for the
    :func:`encode`\ d document ``blob`` of ``generation``."""
    return {GENERATION_KEY: str(generation)}, {DOCUMENT_KEY: base64.b64encode(blob).decode()}


def decode_configmap(
    data: Mapping[str, str] | None, binary_data: Mapping[str, str | bytes] | None
) -> AssignmentDocument:
    """The document of a ConfigMap's ``data`` and ``binaryData`` (base64 strings, as the
    API returns them); the two generation fields must agree."""
    encoded = (binary_data or {}).get(DOCUMENT_KEY)
    if encoded is None:
        raise DocumentError(f"binaryData[{DOCUMENT_KEY!r}] is missing")
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DocumentError(f"binaryData[{DOCUMENT_KEY!r}] is not base64: {exc}") from exc
    document = decode(blob)
    announced = (data or {}).get(GENERATION_KEY)
    if announced is None or announced.strip() != str(document.generation):
        raise DocumentError(
            f"data.{GENERATION_KEY} {announced!r} does not match the document's "
            f"{document.generation}"
        )
    return document
