"""The topology as the operator sees it: the protocol's ``/topology`` document.

The operator cannot import an application's code (it runs in another image), yet it
needs the shape the worker runs: which topics each sub-topology reads (to count tasks
and spot source growth), which stores it has and their changelogs (to measure lag).
:func:`describe` renders a :class:`~segue.worker.topology.Topology` as the protocol's
:class:`~segue.protocol.topology.TopologyDescription`, every internal name resolved for
the worker's effective application id (``--application-id``, else the topology's
default, as ``runtime`` computes it). ``http`` serves its document; the operator reads
it back with ``segue.protocol.topology.parse_topology``.
"""

from __future__ import annotations

from segue.protocol.topology import SubTopologyDescription, TopologyDescription
from segue.worker.topology import TopicSpec, Topology


def describe(topology: Topology, application_id: str) -> TopologyDescription:
    """``partitions`` is the explicit partition count of a sub-topology's internal
    (repartition) sources, or None when they take the writer's task count or there are
    none. The writer's sink declaration wins, as in ``topics.resolve``, which creates
    the topic from the writing side."""
    subs = []
    for sub in topology.subtopologies:
        internal = [s for s in sub.sources if s.internal]
        explicit = [n for n in (_declared(topology, s) for s in internal) if n is not None]
        subs.append(
            SubTopologyDescription(
                id=sub.id,
                source_topics=tuple(s.topic(application_id) for s in sub.sources),
                stores=tuple(s.name for s in sub.stores),
                changelog_topics=tuple(s.changelog(application_id) for s in sub.stores),
                repartition_sources=tuple(s.topic(application_id) for s in internal),
                partitions=explicit[0] if explicit else None,
                sink_topics=tuple(k.topic(application_id) for k in sub.sinks),
            )
        )
    return TopologyDescription(application_id, tuple(subs))


def _declared(topology: Topology, source: TopicSpec) -> int | None:
    writer = topology.writer_of(source.name)
    sink = next(k for k in writer.sinks if k.internal and k.name == source.name)
    return sink.partitions if sink.partitions is not None else source.partitions
