"""Task and member identifiers: parsing and the canonical orders everything is sorted by.

Tasks sort as Kafka Streams' ``TaskId`` does (sub-topology, then partition, numerically),
members in natural order (``wc-2`` before ``wc-10``). Every decision is computed on these
canonical orders, so the same request gives the same answer whatever order it lists things in.
"""

from __future__ import annotations

import re

from .errors import InvalidRequest

TASK_ID_PATTERN = r"^(0|[1-9][0-9]*)_(0|[1-9][0-9]*)$"
_TASK_ID = re.compile(TASK_ID_PATTERN)
_DIGITS = re.compile(r"(\d+)")


def parse_task_id(task_id: str) -> tuple[int, int]:
    """``"1_3"`` -> ``(1, 3)``: (sub-topology, partition)."""
    match = _TASK_ID.match(task_id)
    if match is None:
        raise InvalidRequest(
            f"malformed task id {task_id!r}: expected '<subtopology>_<partition>', e.g. '1_3'"
        )
    return int(match.group(1)), int(match.group(2))


def task_id(subtopology: int, partition: int) -> str:
    return f"{subtopology}_{partition}"


def member_sort_key(member_id: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """Natural order: digit runs compare as numbers, so pod ordinals sort as humans expect.

    The raw id breaks the tie between spellings such as ``a1`` and ``a01``.
    """
    parts = tuple(
        (1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(member_id) if part
    )
    return parts, member_id
