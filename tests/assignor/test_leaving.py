"""Scale-down picks the members whose departure moves the fewest state bytes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue.assignor import AssignRequest, InvalidRequest, pick_leaving


def request(
    sizes: dict[str, int | None], current: dict[str, dict[str, list[str]]], members: list[str]
) -> AssignRequest:
    return AssignRequest.model_validate(
        {
            "tasks": [{"id": t, "stateful": True, "state_bytes": b} for t, b in sizes.items()],
            "members": [{"id": m} for m in members],
            "current": current,
        }
    )


def test_picks_the_member_holding_the_least_state() -> None:
    sizes: dict[str, int | None] = {"0_0": 100, "0_1": 5, "0_2": 7, "0_3": 50}
    current = {
        "a": {"active": ["0_0"]},
        "b": {"active": ["0_1"], "standby": ["0_3"]},
        "c": {"active": ["0_2", "0_3"]},
    }
    assert pick_leaving(request(sizes, current, ["a", "b", "c"]), 1) == ["b"]
    assert pick_leaving(request(sizes, current, ["a", "b", "c"]), 2) == ["b", "c"]


def test_ties_go_to_the_highest_ordinal() -> None:
    sizes: dict[str, int | None] = {f"0_{p}": 10 for p in (2, 9, 10)}
    current = {f"wc-{i}": {"active": [f"0_{i}"]} for i in (2, 9, 10)}
    members = ["wc-2", "wc-9", "wc-10", "wc-11"]
    assert pick_leaving(request(sizes, current, members), 1) == ["wc-11"]  # holds nothing
    assert pick_leaving(request(sizes, current, members), 2) == ["wc-10", "wc-11"]


@given(st.lists(st.integers(0, 50), min_size=2, max_size=6), st.data())
def test_the_pick_is_the_cheapest_set(sizes_list: list[int], data: st.DataObject) -> None:
    members = [f"m-{i}" for i in range(4)]
    sizes: dict[str, int | None] = {f"0_{p}": s for p, s in enumerate(sizes_list)}
    current: dict[str, dict[str, list[str]]] = {m: {"active": [], "standby": []} for m in members}
    for t in sizes:
        owner = data.draw(st.sampled_from(members))
        current[owner]["active"].append(t)
        spare = data.draw(st.sampled_from([None, *[m for m in members if m != owner]]))
        if spare:
            current[spare]["standby"].append(t)
    count = data.draw(st.integers(1, 3))
    chosen = pick_leaving(request(sizes, current, members), count)

    def cost(group: tuple[str, ...]) -> int:
        return sum(
            sizes[t] or 0 for m in group for role in ("active", "standby") for t in current[m][role]
        )

    assert cost(tuple(chosen)) == min(cost(g) for g in itertools.combinations(members, count))


def test_someone_must_stay() -> None:
    sizes: dict[str, int | None] = {"0_0": 1}
    with pytest.raises(InvalidRequest, match="at least one must stay"):
        pick_leaving(request(sizes, {}, ["a", "b"]), 2)


def test_unknown_sizes_count_replicas() -> None:
    sizes: dict[str, int | None] = {"0_0": None, "0_1": None, "0_2": None}
    current: dict[str, Any] = {"a": {"active": ["0_0", "0_1"]}, "b": {"active": ["0_2"]}}
    assert pick_leaving(request(sizes, current, ["a", "b"]), 1) == ["b"]
