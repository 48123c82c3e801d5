"""The assignment document of docs/protocol.md: encoding, decoding and its size limit.

Pure (``json`` and ``gzip`` only), so the decision core can refuse a generation that
would not fit in its ConfigMap before anything is written. ``mtime=0`` keeps the
bytes a function of the content: the same generation always encodes the same.
The worker's reader is ``segue.worker.assignment``; both follow the protocol text.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

from .model import Expansion, Published, Roles

DOCUMENT_KEY = "assignment.json.gz"
MAX_DOCUMENT_BYTES = 900 * 1024  # a ConfigMap holds 1 MiB; leave room for the rest


class DocumentError(ValueError):
    """A stored document that cannot be read back."""


def encode(published: Published, application_id: str) -> bytes:
    doc: dict[str, Any] = {
        "version": 1,
        "application_id": application_id,
        "generation": published.generation,
        "members": {
            m: {
                "active": list(r.active),
                "standby": list(r.standby),
                "learning": list(r.learning),
            }
            for m, r in sorted(published.members.items())
        },
    }
    if published.partition_map:
        doc["partition_map"] = {
            str(s): {"initial_partitions": e.initial, "current_partitions": e.current}
            for s, e in sorted(published.partition_map.items())
        }
    text = json.dumps(doc, separators=(",", ":"), sort_keys=False).encode()
    return gzip.compress(text, compresslevel=9, mtime=0)


def decode(blob: bytes) -> Published:
    try:
        doc = json.loads(gzip.decompress(blob))
        members = {
            str(m): Roles(
                tuple(r.get("active", ())),
                tuple(r.get("standby", ())),
                tuple(r.get("learning", ())),
            )
            for m, r in doc["members"].items()
        }
        pmap = {
            int(s): Expansion(int(e["initial_partitions"]), int(e["current_partitions"]))
            for s, e in doc.get("partition_map", {}).items()
        }
        return Published(int(doc["generation"]), members, pmap)
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DocumentError(f"{DOCUMENT_KEY}: not a valid assignment document ({exc})") from exc
