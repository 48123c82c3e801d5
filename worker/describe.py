"""The topology as the operator sees it: the JSON document served at ``/topology``.

The operator cannot import an application's code (it runs in another image), yet
it needs the shape the worker runs: which topics each sub-topology reads (to
count tasks and spot source growth), which stores it has and their changelogs
(to measure lag). :func:`describe` renders a :class:`~segue.worker.topology.Topology`
with every internal name resolved for the worker's effective application id
(``--application-id``, else the topology's default, as ``runtime`` computes it).
``http`` serves the bytes ``cli`` builds once at start; the operator reads them
with ``segue.operator.observe.topology`` (docs/protocol.md, "The topology
endpoint"). camelCase keys, like the StreamApp spec's ``subTopologies``.
"""

from __future__ import annotations

from typing import Any

from segue.worker.topology import TopicSpec, Topology


def describe(topology: Topology, application_id: str) -> dict[str, Any]:
    """``{"applicationId", "subTopologies": [{"id", "sourceTopics", "stores",
    "changelogTopics", "repartitionSources", "partitions"}]}``.

    ``partitions`` is the explicit partition count of the sub-topology's internal
    (repartition) sources, or None when they take the writer's task count or
    there are none. The writer's sink declaration wins, as in ``topics.resolve``,
    which creates the topic from the writing side."""
    subs = []
    for sub in topology.subtopologies:
        internal = [s for s in sub.sources if s.internal]
        explicit = [n for n in (_declared(topology, s) for s in internal) if n is not None]
        subs.append(
            {
                "id": sub.id,
                "sourceTopics": [s.topic(application_id) for s in sub.sources],
                "stores": [s.name for s in sub.stores],
                "changelogTopics": [s.changelog(application_id) for s in sub.stores],
                "repartitionSources": [s.topic(application_id) for s in internal],
                "partitions": explicit[0] if explicit else None,
            }
        )
    return {"applicationId": application_id, "subTopologies": subs}


def _declared(topology: Topology, source: TopicSpec) -> int | None:
    writer = topology.writer_of(source.name)
    sink = next(k for k in writer.sinks if k.internal and k.name == source.name)
    return sink.partitions if sink.partitions is not None else source.partitions
