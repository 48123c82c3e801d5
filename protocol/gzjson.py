"""Gzipped compact JSON, the encoding of every document the contract puts in a ConfigMap.

Deterministic (sorted keys, ``mtime=0``): the same value always gives the same bytes, so a
document's size can be judged before it is written. :mod:`.document` and :mod:`.kstreams`
use it; each checks its own version and schema on what :func:`loads` returns.
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any


def dumps(value: Any) -> bytes:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def loads(blob: bytes, key: str, error: type[ValueError]) -> dict[str, Any]:
    """The JSON object in ``blob``; ``error`` naming ``key`` if it is not one."""
    try:
        raw = json.loads(gzip.decompress(blob))
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        raise error(f"{key}: not gzipped JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise error(f"{key}: expected a JSON object")
    return raw
