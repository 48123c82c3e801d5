"""segue.operator.decide: the scaling state machine, the pure half of the decision core.

``decide(world) -> plan``: no I/O, no clock, no randomness. With :mod:`segue.assignor` it
is everything that chooses; the operator's shell (``segue.operator.reconcile``) observes
and acts around it, and the what-if simulator drives it with synthetic worlds.
"""

from .core import decide
from .document import DOCUMENT_KEY, MAX_DOCUMENT_BYTES, DocumentError, decode, encode
from .model import (
    Condition,
    Event,
    Expansion,
    Handover,
    MemberSummary,
    Memory,
    Plan,
    PodObs,
    Policy,
    Published,
    Roles,
    Status,
    SubTopology,
    World,
)

__all__ = [
    "DOCUMENT_KEY",
    "MAX_DOCUMENT_BYTES",
    "Condition",
    "DocumentError",
    "Event",
    "Expansion",
    "Handover",
    "MemberSummary",
    "Memory",
    "Plan",
    "PodObs",
    "Policy",
    "Published",
    "Roles",
    "Status",
    "SubTopology",
    "World",
    "decide",
    "decode",
    "encode",
]
