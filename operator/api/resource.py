"""The StreamApp resource as a whole, and how the operator reads it from the API server.

:class:`StreamApp` wraps the user's ``spec`` (``spec``, ``template``) and the
operator's ``status`` (``status``) in one Kubernetes object. The operator parses every
object it reads with :meth:`StreamApp.from_object`; a bad object becomes one
:class:`InvalidStreamApp` that names each bad field by its wire path
(:func:`field_path`), as the API server would, so the operator can report it on the
object. Unlike the spec models this one is not frozen, and its own docstrings do not
reach the CRD: ``crd`` writes the top level of the schema by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from segue.operator.api.base import API_VERSION, KIND
from segue.operator.api.spec import StreamAppSpec
from segue.operator.api.status import StreamAppStatus


class InvalidStreamApp(ValueError):
    """A StreamApp object that does not match the schema; ``errors`` are (field path, message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("invalid StreamApp: " + "; ".join(f"{p}: {m}" for p, m in errors))


def field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's error location as the API server writes it: ``spec.template.env[0].name``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path


class StreamApp(BaseModel):
    """A StreamApp object: what the operator reads from, and writes back to, the API server."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, extra="forbid"
    )

    api_version: Literal["segue.dev/v1alpha1"] = API_VERSION
    kind: Literal["StreamApp"] = KIND
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: StreamAppSpec
    status: StreamAppStatus | None = None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> StreamApp:
        """Parse a Kubernetes object; raise :class:`InvalidStreamApp` naming each bad field."""
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            raise InvalidStreamApp(
                [(field_path(e["loc"]) or "(object)", e["msg"]) for e in exc.errors()]
            ) from None

    def to_object(self) -> dict[str, Any]:
        """The object as JSON-ready camelCase data, unset optional fields left out."""
        return self.model_dump(mode="json", exclude_none=True)
