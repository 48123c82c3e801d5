"""Serdes: how keys and values of topics and stores turn into bytes and back.

The topology (``topology``) names one serde per key and value of every topic and
store; the runtime (``active``) calls them at the edges of a task, so processors
see Python values and Kafka sees bytes. A serde that cannot decode raises
:class:`MalformedRecord`, which the sub-topology's error policy handles
(``processor.ErrorPolicy``): a bad record is never decoded into a wrong value.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class MalformedRecord(ValueError):
    """A record's bytes could not be decoded by its declared serde."""


@dataclass(frozen=True)
class Serde(Generic[T]):
    """Base class: ``serialize`` to bytes, ``deserialize`` from bytes. ``None``
    passes through both ways (a Kafka null key or a tombstone)."""

    name: str

    def serialize(self, value: T | None) -> bytes | None:
        return None if value is None else self._to_bytes(value)

    def deserialize(self, data: bytes | None) -> T | None:
        if data is None:
            return None
        try:
            return self._from_bytes(data)
        except (ValueError, UnicodeDecodeError, struct.error) as exc:
            raise MalformedRecord(f"{self.name} serde cannot decode {data[:32]!r}: {exc}") from exc

    def _to_bytes(self, value: T) -> bytes:
        raise NotImplementedError

    def _from_bytes(self, data: bytes) -> T:
        raise NotImplementedError


class _Bytes(Serde[bytes]):
    def _to_bytes(self, value: bytes) -> bytes:
        return bytes(value)

    def _from_bytes(self, data: bytes) -> bytes:
        return data


class _String(Serde[str]):
    def _to_bytes(self, value: str) -> bytes:
        return value.encode("utf-8")

    def _from_bytes(self, data: bytes) -> str:
        return data.decode("utf-8")


class _Int64(Serde[int]):
    """Big-endian signed 64-bit, as Kafka's ``LongSerializer`` writes it."""

    def _to_bytes(self, value: int) -> bytes:
        return struct.pack(">q", value)

    def _from_bytes(self, data: bytes) -> int:
        if len(data) != 8:
            raise ValueError(f"expected 8 bytes, got {len(data)}")
        return int(struct.unpack(">q", data)[0])


class _Json(Serde[Any]):
    def _to_bytes(self, value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")

    def _from_bytes(self, data: bytes) -> Any:
        return json.loads(data)


BYTES: Serde[bytes] = _Bytes("bytes")
STRING: Serde[str] = _String("string")
INT64: Serde[int] = _Int64("int64")
JSON: Serde[Any] = _Json("json")
