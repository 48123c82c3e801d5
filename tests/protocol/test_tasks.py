"""The protocol's task ids and partition mapping (seed 004)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue.protocol.tasks import (
    Expansion,
    TaskId,
    copartitioning_error,
    source_partitions,
    task_for_partition,
)


def test_task_ids_parse_like_the_assignor() -> None:
    assert TaskId.parse("1_3") == TaskId(1, 3)
    assert str(TaskId(12, 0)) == "12_0"
    for bad in ("1-3", "01_3", "1_", "_1", "a_b", "1_2_3", ""):
        with pytest.raises(ValueError, match="malformed task id"):
            TaskId.parse(bad)


def test_source_partitions_without_and_with_expansion() -> None:
    assert source_partitions(TaskId(0, 1), 3, None) == [1]
    assert source_partitions(TaskId(0, 5), 3, None) == []
    assert source_partitions(TaskId(0, 1), 12, Expansion(6, 12)) == [1, 7]
    # Partitions the operator has not published yet are not read.
    assert source_partitions(TaskId(0, 1), 24, Expansion(6, 12)) == [1, 7]
    assert source_partitions(TaskId(0, 1), 8, Expansion(6, 12)) == [1, 7]


@given(st.integers(1, 16), st.integers(0, 4), st.integers(0, 15))
def test_every_partition_belongs_to_exactly_one_task(initial: int, factor: int, sub: int) -> None:
    current = initial * (factor + 1)
    expansion = Expansion(initial, current)
    owners: dict[int, TaskId] = {}
    for t in range(initial):
        for p in source_partitions(TaskId(sub, t), current, expansion):
            assert p not in owners
            owners[p] = TaskId(sub, t)
    assert sorted(owners) == list(range(current))
    assert all(task_for_partition(sub, p, expansion) == owner for p, owner in owners.items())


def test_copartitioning() -> None:
    assert copartitioning_error({"a": 3, "b": 3}) is None
    assert "a=3, b=4" in (copartitioning_error({"b": 4, "a": 3}) or "")
