"""The ``/topology`` document: the shape of a stream application, as a worker serves it.

The operator never imports application code, yet it needs the application's shape:
which topics each sub-topology reads (to count its tasks and see its sources grow) and
which stores it has (to read their changelogs' end offsets). A worker renders its
``Topology`` as a :class:`TopologyDescription` (``segue.worker.describe``) and serves
:meth:`TopologyDescription.document` at :data:`~.names.TOPOLOGY_PATH`; the operator
reads it back with :func:`parse_topology`, which also accepts a StreamApp spec's
``subTopologies`` (``id``, ``sourceTopics``, ``stores``) and derives the internal
names by :mod:`.names`' rules. camelCase keys, like the StreamApp spec's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from segue.protocol.names import changelog_topic, is_repartition_topic


@dataclass(frozen=True, slots=True)
class SubTopologyDescription:
    id: int
    source_topics: tuple[str, ...]  # resolved names, repartition topics included
    stores: tuple[str, ...] = ()
    changelog_topics: tuple[str, ...] = ()  # one per store, same order
    repartition_sources: tuple[str, ...] = ()  # the source topics the application owns
    partitions: int | None = None  # explicit size of the repartition sources, if declared
    sink_topics: tuple[str, ...] = ()  # resolved names of the topics it writes (not stores)

    @property
    def stateful(self) -> bool:
        return bool(self.stores)

    def document(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sourceTopics": list(self.source_topics),
            "stores": list(self.stores),
            "changelogTopics": list(self.changelog_topics),
            "repartitionSources": list(self.repartition_sources),
            "partitions": self.partitions,
            "sinkTopics": list(self.sink_topics),
        }


@dataclass(frozen=True, slots=True)
class TopologyDescription:
    application_id: str
    subtopologies: tuple[SubTopologyDescription, ...]  # by id

    def document(self) -> dict[str, Any]:
        return {
            "applicationId": self.application_id,
            "subTopologies": [s.document() for s in self.subtopologies],
        }


def parse_topology(doc: Any, application_id: str | None = None) -> TopologyDescription:
    """Validate a ``/topology`` document, or a StreamApp spec's
    ``{"subTopologies": [{"id", "sourceTopics", "stores"}]}`` with ``application_id``.

    Missing (or null) ``stores`` are none; missing ``changelogTopics`` derive as
    :func:`~.names.changelog_topic`; missing ``repartitionSources`` are the source topics
    named like repartition topics. If both the document and the argument name an
    application id they must agree. Sub-topologies come back sorted by id. ValueError
    names the bad field."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"topology: expected an object, got {type(doc).__name__}")
    app = doc.get("applicationId")
    if app is None:
        if application_id is None:
            raise ValueError("applicationId: missing (pass application_id for a StreamApp spec)")
        app = application_id
    elif not isinstance(app, str) or not app:
        raise ValueError(f"applicationId: expected a non-empty string, got {app!r}")
    elif application_id is not None and app != application_id:
        raise ValueError(f"applicationId: {app!r} is not the expected {application_id!r}")
    items = doc.get("subTopologies")
    if not isinstance(items, list) or not items:
        raise ValueError(f"subTopologies: expected a non-empty list, got {items!r}")
    subs = [_sub(item, app, f"subTopologies[{i}]") for i, item in enumerate(items)]
    ids = [s.id for s in subs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"subTopologies: duplicate ids in {ids}")
    return TopologyDescription(app, tuple(sorted(subs, key=lambda s: s.id)))


def _sub(item: Any, app: str, where: str) -> SubTopologyDescription:
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: expected an object, got {type(item).__name__}")
    sub_id = item.get("id")
    if not isinstance(sub_id, int) or isinstance(sub_id, bool) or sub_id < 0:
        raise ValueError(f"{where}.id: expected an integer >= 0, got {sub_id!r}")
    sources = _names(item.get("sourceTopics"), f"{where}.sourceTopics")
    if not sources:
        raise ValueError(f"{where}.sourceTopics: a sub-topology needs a source topic")
    given = item.get("stores")
    stores = () if given is None else _names(given, f"{where}.stores")
    if item.get("changelogTopics") is not None:
        changelogs = _names(item["changelogTopics"], f"{where}.changelogTopics")
        if len(changelogs) != len(stores):
            raise ValueError(
                f"{where}.changelogTopics: {len(changelogs)} topics for {len(stores)} stores"
            )
    else:
        changelogs = tuple(changelog_topic(app, store) for store in stores)
    if item.get("repartitionSources") is not None:
        repartition = _names(item["repartitionSources"], f"{where}.repartitionSources")
        strays = [t for t in repartition if t not in sources]
        if strays:
            raise ValueError(f"{where}.repartitionSources: {strays} are not source topics")
    else:
        repartition = tuple(t for t in sources if is_repartition_topic(t, app))
    partitions = item.get("partitions")
    if partitions is not None and (
        not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1
    ):
        raise ValueError(
            f"{where}.partitions: expected null or an integer >= 1, got {partitions!r}"
        )
    given = item.get("sinkTopics")
    sinks = () if given is None else _names(given, f"{where}.sinkTopics")
    return SubTopologyDescription(
        sub_id, sources, stores, changelogs, repartition, partitions, sinks
    )


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list of names, got {value!r}")
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}[{i}]: expected a non-empty string, got {name!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: names a topic or store twice: {value}")
    return tuple(value)
