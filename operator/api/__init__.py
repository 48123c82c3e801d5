"""segue.operator.api: the StreamApp resource (``segue.dev/v1alpha1``), defined once.

The pydantic models in ``spec`` and ``status`` are the API; ``crd`` generates the
CRD (``crds/streamapp.yaml``, ``make crds``) from them. The rest of the operator
imports from here only. ``crd`` is loaded on first use of :func:`render_crd`, so
``python -m segue.operator.api.crd`` runs it without a second import.
"""

from __future__ import annotations

from typing import Any

from segue.operator.api.spec import (
    API_VERSION,
    GROUP,
    KIND,
    PLURAL,
    SHORT_NAME,
    SINGULAR,
    VERSION,
    ContainerPort,
    EnvVar,
    InvalidStreamApp,
    Kafka,
    PodTemplate,
    Resources,
    Scaling,
    SecretRef,
    State,
    StreamApp,
    StreamAppSpec,
    SubTopology,
    Topology,
    VolumeClaim,
)
from segue.operator.api.status import (
    Condition,
    Handover,
    MemberStatus,
    ScalingMemory,
    StreamAppStatus,
)


def render_crd() -> dict[str, Any]:
    """The StreamApp CustomResourceDefinition as a dict (see ``segue.operator.api.crd``)."""
    from segue.operator.api import crd

    return crd.render_crd()


__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "PLURAL",
    "SHORT_NAME",
    "SINGULAR",
    "VERSION",
    "Condition",
    "ContainerPort",
    "EnvVar",
    "Handover",
    "InvalidStreamApp",
    "Kafka",
    "MemberStatus",
    "PodTemplate",
    "Resources",
    "Scaling",
    "ScalingMemory",
    "SecretRef",
    "State",
    "StreamApp",
    "StreamAppSpec",
    "StreamAppStatus",
    "SubTopology",
    "Topology",
    "VolumeClaim",
    "render_crd",
]
