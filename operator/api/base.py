"""What every part of the StreamApp API shares: its names, its patterns, the spec's base model.

``template`` and ``spec`` build the desired state from :class:`Model`, ``resource``
pins ``apiVersion`` and ``kind`` to the constants here, and ``crd`` names the CRD with
them. Python names are snake_case, the wire is camelCase. Spec models are frozen and
reject unknown fields, so a typo fails here as it fails at the API server.
:data:`Quantity` and :data:`KubeObject` carry their own JSON schema, which ``crd``
copies into the CRD as it is. This module imports nothing else of the package, so
every other module can build on it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, PlainValidator, WithJsonSchema
from pydantic.alias_generators import to_camel

GROUP: Final = "segue.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = "segue.dev/v1alpha1"  # GROUP/VERSION, spelled out for the type checker
KIND: Final = "StreamApp"
PLURAL: Final = "streamapps"
SINGULAR: Final = "streamapp"
SHORT_NAME: Final = "sapp"
CRD_NAME: Final = "streamapps.segue.dev"  # PLURAL.GROUP, the CustomResourceDefinition's name

DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# resource.Quantity's syntax, as controller-gen writes it into CRDs.
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
STORAGE_SIZE = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"


def _quantity(value: object) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.match(QUANTITY, value):
        return value
    raise ValueError("must be an integer or a quantity string such as 500m or 1Gi")


Quantity = Annotated[
    int | str,
    PlainValidator(_quantity),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""A Kubernetes resource quantity: an integer, or a string such as ``500m`` or ``1Gi``."""

KubeObject = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""Any Kubernetes object, passed through unvalidated (the API server checks it in the pod)."""


class Model(BaseModel):
    """Spec models: camelCase on the wire, unknown fields rejected, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )
