"""Task and member identifiers: the canonical orders everything is sorted by.

Task ids are the protocol's (``segue.protocol.tasks``); a malformed one is an
:class:`~.errors.InvalidRequest` here.

Tasks sort as Kafka Streams' ``TaskId`` does (sub-topology, then partition, numerically),
members in natural order (``wc-2`` before ``wc-10``). Every decision is computed on these
canonical orders, so the same request gives the same answer whatever order it lists things in.
"""

from __future__ import annotations

import re
from functools import lru_cache

from segue.protocol.tasks import TASK_ID_PATTERN, task_id, task_sort_key

from .errors import InvalidRequest

__all__ = ["TASK_ID_PATTERN", "member_sort_key", "parse_task_id", "task_id"]

_DIGITS = re.compile(r"(\d+)")


def parse_task_id(task: str) -> tuple[int, int]:
    """``"1_3"`` -> ``(1, 3)``: (sub-topology, partition); a malformed id is a bad request."""
    try:
        return task_sort_key(task)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc


@lru_cache(maxsize=1 << 14)  # the same pod names on every look
def member_sort_key(member_id: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """Natural order: digit runs compare as numbers, so pod ordinals sort as humans expect.

    The raw id breaks the tie between spellings such as ``a1`` and ``a01``.
    """
    parts = tuple(
        (1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(member_id) if part
    )
    return parts, member_id
