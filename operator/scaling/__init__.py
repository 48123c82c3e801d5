"""segue.operator.scaling: the scaling state machine, the pure half of the decision core.

``decide(world) -> plan``: no I/O, no clock, no randomness. With :mod:`segue.assignor` it
is everything that chooses; the operator's shell (``segue.operator.reconcile``) observes
and acts around it, and the what-if simulator drives it with synthetic worlds.
"""

from .core import decide
from .document import from_document, to_document
from .model import (
    Assessment,
    Condition,
    Event,
    Handover,
    Held,
    MemberSummary,
    Memory,
    Plan,
    PodObs,
    Policy,
    Progress,
    Published,
    Replication,
    Roles,
    TaskFault,
    World,
)
from .replication import KAFKA_UNAVAILABLE, replication_unread, replication_unreadable

__all__ = [
    "KAFKA_UNAVAILABLE",
    "Assessment",
    "Condition",
    "Event",
    "Handover",
    "Held",
    "MemberSummary",
    "Memory",
    "Plan",
    "PodObs",
    "Policy",
    "Progress",
    "Published",
    "Replication",
    "Roles",
    "TaskFault",
    "World",
    "decide",
    "from_document",
    "replication_unread",
    "replication_unreadable",
    "to_document",
]
