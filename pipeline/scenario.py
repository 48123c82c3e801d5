"""The what-if pipeline's input schema: a :class:`Scenario`.

A Scenario is an app's shape (sub-topologies, partitions, per-task state, rates) and
its timeline (load steps, scale events, pod losses, partition expansions); the
generator (:mod:`.fleet`) and a recorded history's converter (:mod:`.recorded`) write
them. The rows a run emits are :class:`segue.protocol.history.HistoryRecord`, the
schema the operator records too (the operator-pipeline contract lives in
``segue.protocol``). Pydantic, because a scenario crosses a boundary (files, Spark
rows): a bad row fails with the field named. Inside the simulator everything is a plain
dataclass (:mod:`.state`). Units: seconds, records, bytes; rates per second.
docs/pipeline.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# simulate.py names the row type from here; its home is segue.protocol.history.
from segue.protocol.history import HistoryRecord as HistoryRecord  # noqa: PLC0414

SCHEMA_VERSION: Literal[1] = 1


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubTopology(_Row):
    """One sub-topology: ``partitions`` tasks ``<id>_<p>``, each with its own state."""

    id: int = Field(ge=0)
    partitions: int = Field(ge=1, le=10_000)
    state_bytes: list[int] = Field(default_factory=list)  # per partition; empty: stateless
    record_bytes: int = Field(default=1_000, ge=1)  # one changelog record
    restore_rate: float = Field(default=20_000.0, gt=0)  # changelog records/s per copy
    changelog_ratio: float = Field(default=0.0, ge=0)  # changelog records per input record

    @property
    def stateful(self) -> bool:
        return bool(self.state_bytes)

    @model_validator(mode="after")
    def _one_size_per_partition(self) -> SubTopology:
        if self.state_bytes and len(self.state_bytes) != self.partitions:
            raise ValueError(
                f"state_bytes has {len(self.state_bytes)} entries for {self.partitions} partitions"
            )
        return self


class LoadStep(_Row):
    """From ``at`` on, every input partition receives ``rate`` records/s."""

    at: float = Field(ge=0)
    rate: float = Field(ge=0)


class ScaleTo(_Row):
    kind: Literal["scale"] = "scale"
    at: float = Field(ge=0)
    replicas: int = Field(ge=0, le=1_000)


class PodLost(_Row):
    """Pod ``<app>-<ordinal>`` and its local state vanish (a node died)."""

    kind: Literal["pod_lost"] = "pod_lost"
    at: float = Field(ge=0)
    ordinal: int = Field(ge=0)


class PartitionsExpanded(_Row):
    """The source topic of ``subtopology`` grows to ``partitions`` (new tasks, empty state)."""

    kind: Literal["expand"] = "expand"
    at: float = Field(ge=0)
    subtopology: int = Field(ge=0)
    partitions: int = Field(ge=1, le=10_000)


ScenarioEvent = Annotated[ScaleTo | PodLost | PartitionsExpanded, Field(discriminator="kind")]


class Scenario(_Row):
    """One app and what happens to it over ``duration`` seconds."""

    version: Literal[1] = SCHEMA_VERSION
    name: str = Field(min_length=1)
    app: str = Field(default="app", pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
    replicas: int = Field(ge=1, le=1_000)  # at t=0, already balanced and caught up
    duration: float = Field(gt=0)
    pod_rate: float = Field(default=50_000.0, gt=0)  # records/s one pod processes
    startup_delay: float = Field(default=20.0, ge=0)  # pod created -> running
    subtopologies: list[SubTopology] = Field(min_length=1)
    load: list[LoadStep] = Field(default_factory=lambda: [LoadStep(at=0, rate=100.0)])
    events: list[ScenarioEvent] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        ids = [s.id for s in self.subtopologies]
        if len(set(ids)) != len(ids):
            raise ValueError(f"subtopologies: duplicate ids {ids}")
        for e in self.events:
            if isinstance(e, PartitionsExpanded) and e.subtopology not in ids:
                raise ValueError(f"events: expand names unknown subtopology {e.subtopology}")
        return self

    def rate_at(self, now: float) -> float:
        """Input records/s per partition at ``now`` (the last load step at or before it)."""
        rate = 0.0
        for step in sorted(self.load, key=lambda s: s.at):
            if step.at <= now:
                rate = step.rate
        return rate
