"""The changelog position stored with a store's data, encoded so damage shows.

Each store keeps, in the same atomic write as its data (``engine``), the
changelog partition it mirrors, the next offset to read from it, and the changelog
records (and their key+value bytes) it has applied since it was created empty: what
a restore from nothing reads, the size the operator weighs a move by. Kept here so a
store reopened from disk still knows it (a checkpoint without them counts from 0). The bytes
carry a magic and a CRC32, so a damaged or foreign checkpoint is detected and the
store is wiped and restored (``restore``) instead of serving wrong state.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

MAGIC = b"SGC1"


class CorruptCheckpoint(ValueError):
    """The checkpoint bytes are damaged or not a checkpoint."""


@dataclass(frozen=True)
class Checkpoint:
    topic: str
    partition: int
    offset: int  # the next changelog offset the store will read
    records: int = 0  # changelog records applied since the store was created empty
    nbytes: int = 0  # their key+value bytes


def encode(checkpoint: Checkpoint) -> bytes:
    payload = json.dumps(
        {
            "topic": checkpoint.topic,
            "partition": checkpoint.partition,
            "offset": checkpoint.offset,
            "records": checkpoint.records,
            "bytes": checkpoint.nbytes,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    return MAGIC + struct.pack(">I", zlib.crc32(payload)) + payload


def decode(data: bytes) -> Checkpoint:
    if len(data) < 8 or data[:4] != MAGIC:
        raise CorruptCheckpoint(f"not a checkpoint: {data[:16]!r}")
    (crc,) = struct.unpack(">I", data[4:8])
    payload = data[8:]
    if zlib.crc32(payload) != crc:
        raise CorruptCheckpoint("checkpoint checksum mismatch")
    try:
        fields = json.loads(payload)
        checkpoint = Checkpoint(
            str(fields["topic"]),
            int(fields["partition"]),
            int(fields["offset"]),
            int(fields.get("records", 0)),
            int(fields.get("bytes", 0)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptCheckpoint(f"checkpoint payload unreadable: {exc}") from exc
    if min(checkpoint.partition, checkpoint.offset, checkpoint.records, checkpoint.nbytes) < 0:
        raise CorruptCheckpoint(f"checkpoint out of range: {checkpoint}")
    return checkpoint
