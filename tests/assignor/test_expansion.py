"""Partition expansion (seed 004): every key keeps its task, or the change is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue.assignor import ExpansionRefused, SourceTopic, expand_partitions


@given(st.integers(1, 40), st.integers(1, 6), st.integers(0, 10**9))
def test_every_key_keeps_its_task(initial: int, factor: int, key_hash: int) -> None:
    current = initial * factor
    mapping = expand_partitions([SourceTopic("in", 1, initial, current)])["in"]
    assert len(mapping) == current
    assert mapping[key_hash % current] == f"1_{key_hash % initial}"
    assert len(set(mapping)) == initial


def test_unchanged_topics_map_one_to_one() -> None:
    mapping = expand_partitions([SourceTopic("in", 0, 3, 3)])
    assert mapping == {"in": ("0_0", "0_1", "0_2")}


def test_co_partitioned_topics_may_grow_by_different_multiples() -> None:
    mapping = expand_partitions([SourceTopic("left", 2, 4, 8), SourceTopic("right", 2, 4, 16)])
    for key_hash in range(1000):
        assert mapping["left"][key_hash % 8] == mapping["right"][key_hash % 16]


@pytest.mark.parametrize(
    ("topics", "words"),
    [
        ([SourceTopic("in", 1, 6, 9)], ["'in'", "6 to 9", "multiple of 6", "12"]),
        ([SourceTopic("in", 1, 6, 4)], ["'in'", "6 to 4", "remove"]),
        (
            [SourceTopic("a", 1, 4, 8), SourceTopic("b", 1, 6, 12)],
            ["sub-topology 1", "'a'", "'b'", "4", "6"],
        ),
        ([SourceTopic("a", 1, 4, 8), SourceTopic("a", 1, 4, 8)], ["'a'", "twice"]),
        ([SourceTopic("a", 1, 0, 8)], ["'a'", "positive"]),
    ],
)
def test_other_changes_are_refused_with_the_reason(
    topics: list[SourceTopic], words: list[str]
) -> None:
    with pytest.raises(ExpansionRefused) as error:
        expand_partitions(topics)
    for word in words:
        assert word in str(error.value)
