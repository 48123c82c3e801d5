"""The decision core's generation as the protocol's assignment document, both ways.

The machine works on plain frozen dataclasses (:class:`~.model.Published`); the wire
format, its version and its size limit are the protocol's (``segue.protocol.document``).
Encoding here lets the core refuse a generation that would not fit in its ConfigMap
before anything is written.
"""

from __future__ import annotations

from segue.protocol import AssignmentDocument, MemberRoles, PartitionMapEntry

from .model import Published, Roles


def to_document(published: Published, application_id: str) -> AssignmentDocument:
    return AssignmentDocument(
        application_id=application_id,
        generation=published.generation,
        members={
            m: MemberRoles(active=r.active, standby=r.standby, learning=r.learning)
            for m, r in sorted(published.members.items())
        },
        partition_map={
            str(s): PartitionMapEntry(initial_partitions=e.initial, current_partitions=e.current)
            for s, e in sorted(published.partition_map.items())
        },
    )


def from_document(document: AssignmentDocument) -> Published:
    members = {
        m: Roles(tuple(t.active), tuple(t.standby), tuple(t.learning))
        for m, t in document.members.items()
    }
    return Published(document.generation, members, document.expansions())
