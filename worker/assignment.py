"""The assignment document of docs/protocol.md, read from its ConfigMap.

The operator writes one ConfigMap per app, ``<app>-assignment``: the generation in
``data.generation`` and the gzipped JSON document in
``binaryData["assignment.json.gz"]``. This module decodes and validates it
(pydantic: this is a boundary) and answers "what does member M run, in which
role"; ``plan`` diffs that against what runs, ``watch`` fetches it.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from segue.worker.tasks import Expansion

DOCUMENT_KEY = "assignment.json.gz"
Role = Literal["active", "standby", "learning"]
ROLES: tuple[Role, ...] = ("active", "standby", "learning")


class AssignmentError(ValueError):
    """The ConfigMap does not hold a valid assignment document."""


class MemberTasks(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    active: list[str] = Field(default_factory=list)
    standby: list[str] = Field(default_factory=list)
    learning: list[str] = Field(default_factory=list)


class PartitionMapEntry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    initial_partitions: int = Field(ge=1)
    current_partitions: int = Field(ge=1)

    @model_validator(mode="after")
    def _grows(self) -> PartitionMapEntry:
        if self.current_partitions < self.initial_partitions:
            raise ValueError("current_partitions < initial_partitions")
        return self


class AssignmentDocument(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    version: Literal[1]
    application_id: str
    generation: int = Field(ge=0)
    members: dict[str, MemberTasks]
    partition_map: dict[str, PartitionMapEntry] = Field(default_factory=dict)

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
        """``partition_map`` keyed by sub-topology number (malformed keys are an error)."""
        out: dict[int, Expansion] = {}
        for key, entry in self.partition_map.items():
            if not key.isdigit():
                raise AssignmentError(f"partition_map key {key!r} is not a sub-topology number")
            out[int(key)] = Expansion(entry.initial_partitions, entry.current_partitions)
        return out


def encode_document(document: AssignmentDocument) -> bytes:
    """Gzipped JSON, as the operator publishes it (used by tests and tools)."""
    raw = json.dumps(document.model_dump(mode="json"), separators=(",", ":"), sort_keys=True)
    return gzip.compress(raw.encode(), mtime=0)


def decode_configmap(
    data: Mapping[str, str] | None, binary_data: Mapping[str, str] | None
) -> AssignmentDocument:
    """Decode a ConfigMap's ``data`` and ``binaryData`` (base64 strings, as the API
    returns them). The two generation fields must agree."""
    encoded = (binary_data or {}).get(DOCUMENT_KEY)
    if encoded is None:
        raise AssignmentError(f"binaryData[{DOCUMENT_KEY!r}] is missing")
    try:
        raw = gzip.decompress(base64.b64decode(encoded, validate=True))
        document = AssignmentDocument.model_validate(json.loads(raw))
    except (binascii.Error, OSError, EOFError, zlib.error, ValueError, ValidationError) as exc:
        raise AssignmentError(f"cannot decode {DOCUMENT_KEY}: {exc}") from exc
    announced = (data or {}).get("generation")
    if announced is None or announced.strip() != str(document.generation):
        raise AssignmentError(
            f"data.generation {announced!r} does not match the document's {document.generation}"
        )
    return document
