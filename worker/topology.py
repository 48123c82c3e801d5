"""The topology API: what a stream application declares.

An application is a :class:`Topology` of sub-topologies, numbered in declaration
order (0, 1, ...). Each has source topics, one processor function
(``processor``), key-value stores and sinks. A repartition step is a sink to an
internal topic, ``<application>-<name>-repartition``, that the next
sub-topology reads; each store is backed by a compacted changelog,
``<application>-<store>-changelog`` (Kafka Streams' names, ``segue.protocol.names``).
Task ids and partition mapping are the protocol's, internal topic sizing ``topics``' job;
this module only holds the declaration and checks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from segue.protocol.names import changelog_topic, repartition_topic
from segue.worker.processor import ERROR_POLICIES, ErrorPolicy, Processor
from segue.worker.serdes import BYTES, Serde


@dataclass(frozen=True)
class TopicSpec:
    """A topic a sub-topology reads or writes. Processors send to its ``ref``: the
    ``label`` if it has one, else its name (for a repartition topic, the short name)."""

    name: str
    key: Serde[Any] = BYTES
    value: Serde[Any] = BYTES
    internal: bool = False  # a repartition topic the application owns
    partitions: int | None = None  # internal only; default: the writer's task count
    label: str | None = None

    @property
    def ref(self) -> str:
        return self.label or self.name

    def topic(self, application_id: str) -> str:
        return repartition_topic(application_id, self.name) if self.internal else self.name


@dataclass(frozen=True)
class StoreSpec:
    name: str
    key: Serde[Any] = BYTES
    value: Serde[Any] = BYTES

    def changelog(self, application_id: str) -> str:
        return changelog_topic(application_id, self.name)


@dataclass(frozen=True)
class SubTopology:
    id: int
    sources: tuple[TopicSpec, ...]
    processor: Processor
    stores: tuple[StoreSpec, ...] = ()
    sinks: tuple[TopicSpec, ...] = ()
    on_error: ErrorPolicy = "stop"


@dataclass
class Topology:
    """``Topology("wordcount")`` then ``.subtopology(...)`` once per sub-topology.

    ``application_id`` is a default: the worker's ``--application-id`` (the
    StreamApp's ``spec.applicationId``) wins, and every internal name derives from it.
    """

    application_id: str
    subtopologies: list[SubTopology] = field(default_factory=list)

    def topic(
        self,
        name: str,
        key: Serde[Any] = BYTES,
        value: Serde[Any] = BYTES,
        label: str | None = None,
    ) -> TopicSpec:
        """An external topic; ``label`` lets processors send to it by a fixed name
        while the topic's name is configurable."""
        return TopicSpec(name, key, value, label=label)

    def repartition(
        self,
        name: str,
        key: Serde[Any] = BYTES,
        value: Serde[Any] = BYTES,
        partitions: int | None = None,
    ) -> TopicSpec:
        return TopicSpec(name, key, value, internal=True, partitions=partitions)

    def store(self, name: str, key: Serde[Any] = BYTES, value: Serde[Any] = BYTES) -> StoreSpec:
        return StoreSpec(name, key, value)

    def subtopology(
        self,
        sources: list[TopicSpec],
        processor: Processor,
        stores: list[StoreSpec] | None = None,
        sinks: list[TopicSpec] | None = None,
        on_error: ErrorPolicy = "stop",
    ) -> SubTopology:
        sub = SubTopology(
            id=len(self.subtopologies),
            sources=tuple(sources),
            processor=processor,
            stores=tuple(stores or ()),
            sinks=tuple(sinks or ()),
            on_error=on_error,
        )
        self._check(sub)
        self.subtopologies.append(sub)
        return sub

    def _check(self, sub: SubTopology) -> None:
        if not sub.sources:
            raise ValueError(f"sub-topology {sub.id} has no source topic")
        if sub.on_error not in ERROR_POLICIES:
            raise ValueError(f"on_error must be one of {ERROR_POLICIES}, not {sub.on_error!r}")
        for kind, names in (
            ("source", [s.name for s in sub.sources]),
            ("sink", [s.ref for s in sub.sinks]),
            ("store", [s.name for s in sub.stores]),
        ):
            if len(set(names)) != len(names):
                raise ValueError(f"sub-topology {sub.id} names a {kind} twice: {names}")
        taken = {s.name for other in self.subtopologies for s in other.stores}
        for store in sub.stores:
            if store.name in taken:
                raise ValueError(f"store {store.name!r} belongs to another sub-topology")
        for source in sub.sources:
            if source.internal and not any(
                source.name == sink.name and sink.internal
                for other in self.subtopologies
                for sink in other.sinks
            ):
                raise ValueError(
                    f"sub-topology {sub.id} reads repartition topic {source.name!r} "
                    "that no earlier sub-topology writes"
                )

    def get(self, subtopology: int) -> SubTopology:
        if not 0 <= subtopology < len(self.subtopologies):
            raise KeyError(f"no sub-topology {subtopology}")
        return self.subtopologies[subtopology]

    def writer_of(self, repartition: str) -> SubTopology:
        for sub in self.subtopologies:
            if any(s.internal and s.name == repartition for s in sub.sinks):
                return sub
        raise KeyError(f"no sub-topology writes repartition topic {repartition!r}")
