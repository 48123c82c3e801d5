"""The history record: one step of one app, as the operator records it to Kafka and the
what-if simulator emits it.

The operator writes a :class:`HistoryRecord` for every reconcile step that changed
something (docs/operator.md, "History"); ``segue.pipeline.recorded`` turns a recorded
history back into a scenario and ``segue.pipeline.history`` emits the same rows from a
simulated run, so recorded and simulated histories are rows of one schema and can be
compared field by field. Pydantic, because the rows cross a boundary (a Kafka topic,
JSON files, Spark rows): a bad row fails with the field named. ``version`` is 1; a later
change bumps it and accepts the old one explicitly. Units: seconds, records, bytes;
rates per second. docs/pipeline.md, "HistoryRecord", is the prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

HISTORY_VERSION: Literal[1] = 1

CopyRole = Literal["active", "standby", "learning"]
MemberState = Literal["member", "joining", "leaving", "absent", "starting"]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubTopologyRecord(_Row):
    """One sub-topology of the app: ``tasks`` tasks ``<id>_<p>``; stateful if it has stores."""

    id: int = Field(ge=0)
    tasks: int = Field(ge=1)
    stateful: bool = False


class TaskRecord(_Row):
    """One stateful task's changelog as far as the app has seen it: the records and their
    key+value bytes that its most complete copy holds (restored plus written), so a copy
    restoring it from nothing reads that much."""

    task: str
    changelog_records: int = Field(ge=0)
    changelog_bytes: int = Field(ge=0)
    processed: int | None = Field(default=None, ge=0)  # input records this step; None: unknown


class CopyRecord(_Row):
    """One copy of one task on one member: how far behind its changelog, how fast it moves."""

    task: str
    member: str
    role: CopyRole
    lag: int = Field(ge=0)  # changelog records behind the end
    restore_rate: float = Field(ge=0)  # records/s restored over the last step


class HeldRoles(Protocol):
    """What a member holds (the operator's ``Roles``, as the operator and simulator share it)."""

    @property
    def active(self) -> Sequence[str]: ...
    @property
    def standby(self) -> Sequence[str]: ...
    @property
    def learning(self) -> Sequence[str]: ...


class MemberRecord(_Row):
    name: str
    state: MemberState
    active: list[str] = Field(default_factory=list)
    standby: list[str] = Field(default_factory=list)
    learning: list[str] = Field(default_factory=list)

    @classmethod
    def holding(cls, name: str, state: MemberState, roles: HeldRoles | None) -> MemberRecord:
        """The member's row; ``roles`` None: it holds nothing in the assignment."""
        if roles is None:
            return cls(name=name, state=state)
        return cls(
            name=name,
            state=state,
            active=list(roles.active),
            standby=list(roles.standby),
            learning=list(roles.learning),
        )


class HistoryRecord(_Row):
    """One step of one app, as the operator records it (and the simulator emits it)."""

    version: Literal[1] = HISTORY_VERSION
    namespace: str = ""  # empty for simulated apps
    app: str
    time: float  # seconds (since the epoch for recorded histories, since start for simulated)
    spec_replicas: int = Field(ge=0)
    generation: int = Field(ge=0)
    subtopologies: list[SubTopologyRecord] = Field(default_factory=list)  # empty: unknown
    members: list[MemberRecord] = Field(default_factory=list)
    copies: list[CopyRecord] = Field(default_factory=list)
    tasks: list[TaskRecord] = Field(default_factory=list)  # stateful, or with processing known
    handovers: int = Field(default=0, ge=0)  # tasks that changed active owner this step
    records_restored: int = Field(default=0, ge=0)  # changelog records every copy restored
    bytes_restored: int = Field(default=0, ge=0)  # their key+value bytes, this step
    # after this step: the operator's Balanced condition (the simulator: balanced and quiet)
    balanced: bool = False


def history_key(namespace: str, app: str) -> str:
    """The Kafka record key of an app's history rows: one app's rows stay in order."""
    return f"{namespace}/{app}"
