"""segue.operator.api: the StreamApp resource (``segue.dev/v1alpha1``), defined once.

The pydantic models are the API: ``base`` holds the names and the shared base model,
``template`` the worker pods, ``spec`` the rest of the desired state, ``status`` what
the operator writes back, and ``resource`` the object as a whole. ``crd`` generates
the CRD (``crds/streamapp.yaml``, ``make crds``) from them. The rest of the operator
imports from here only. ``crd`` is loaded on first use of :func:`render_crd`, so
``python -m segue.operator.api.crd`` runs it without a second import.
"""

from __future__ import annotations

from typing import Any

from segue.operator.api.base import (
    API_VERSION,
    CRD_NAME,
    GROUP,
    KIND,
    PLURAL,
    SHORT_NAME,
    SINGULAR,
    VERSION,
)
from segue.operator.api.resource import InvalidStreamApp, StreamApp
from segue.operator.api.spec import (
    Kafka,
    Scaling,
    SecretRef,
    State,
    StreamAppSpec,
    SubTopologySpec,
    TopologySpec,
    VolumeClaim,
)
from segue.operator.api.status import (
    Condition,
    Handover,
    MemberStatus,
    ScalingMemory,
    StreamAppStatus,
)
from segue.operator.api.template import ContainerPort, EnvVar, PodTemplate, Resources


def render_crd() -> dict[str, Any]:
    """The StreamApp CustomResourceDefinition as a dict (see ``segue.operator.api.crd``)."""
    from segue.operator.api import crd

    return crd.render_crd()


__all__ = [
    "API_VERSION",
    "CRD_NAME",
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
    "SubTopologySpec",
    "TopologySpec",
    "VolumeClaim",
    "render_crd",
]
