"""Bad input gets a clear error naming the offending item; nothing is guessed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from segue.assignor import AssignRequest, InvalidRequest, assign


def base() -> dict[str, Any]:
    return {
        "tasks": [{"id": "1_0", "stateful": True}, {"id": "1_1", "stateful": True}],
        "members": [{"id": "wc-0"}, {"id": "wc-1"}],
        "current": {"wc-0": {"active": ["1_0"]}},
        "lags": {"wc-1": {"1_0": 0}},
    }


def edited(**changes: Any) -> dict[str, Any]:
    request = base()
    request.update(changes)
    return request


@pytest.mark.parametrize(
    ("request_", "names"),
    [
        (edited(members=[{"id": "wc-0"}, {"id": "wc-0"}]), ["wc-0", "twice"]),
        (edited(tasks=[{"id": "1_0", "stateful": True}] * 2), ["1_0", "twice"]),
        (
            edited(current={"wc-0": {"active": ["1_0"]}, "wc-1": {"active": ["1_0"]}}),
            ["1_0", "wc-0", "wc-1"],
        ),
        (
            edited(current={"gone": {"active": ["1_0"]}, "wc-1": {"active": ["1_0"]}}),
            ["1_0", "gone", "wc-1"],
        ),
        (edited(current={"wc-0": {"standby": ["9_9"]}}), ["9_9", "wc-0"]),
        (edited(lags={"wc-1": {"2_0": 3}}), ["2_0", "wc-1"]),
        (edited(lags={"nobody": {"1_0": 3}}), ["nobody"]),
        (edited(members=[]), ["no members"]),
        (edited(current={"wc-0": {"active": ["1_0"], "standby": ["1_0"]}}), ["1_0", "wc-0"]),
        (
            edited(tasks=[{"id": "1_0", "stateful": True}, {"id": "1_1", "stateful": False}]),
            ["1_0", "1_1", "sub-topology 1"],
        ),
        (edited(members=[{"id": "wc-0", "leaving": True}]), ["leaving"]),
    ],
)
def test_contradictions_name_the_offending_item(request_: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(InvalidRequest) as error:
        assign(AssignRequest.model_validate(request_))
    for name in names:
        assert name in str(error.value)


@pytest.mark.parametrize(
    ("request_", "where"),
    [
        (edited(lags={"wc-1": {"1_0": -1}}), "lags.wc-1.1_0"),
        (edited(tasks=[{"id": "1-0", "stateful": True}]), "tasks.0.id"),
        (edited(tasks=[{"id": "1_01", "stateful": True}]), "tasks.0.id"),
        (edited(current={"wc-0": {"active": ["x"]}}), "current.wc-0.active.0"),
        (edited(members=[{"id": "wc-0", "capacity": 0}]), "members.0.capacity"),
        (edited(config={"max_warmup_replicas": 0}), "config.max_warmup_replicas"),
        (edited(config={"num_standbys": 1}), "config.num_standbys"),
        (edited(tasks=[{"id": "1_0"}]), "tasks.0.stateful"),
    ],
)
def test_malformed_fields_are_located(request_: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as error:
        AssignRequest.model_validate(request_)
    located = [".".join(str(p) for p in e["loc"]) for e in error.value.errors()]
    assert where in located


def test_empty_request_is_an_empty_decision() -> None:
    decision = assign(AssignRequest())
    assert decision.target == {}
    assert decision.assignment == {}


def test_member_order_in_the_request_does_not_change_the_decision() -> None:
    request = {
        "tasks": [{"id": f"{s}_{p}", "stateful": s == 1} for s in range(2) for p in range(5)],
        "members": [{"id": f"wc-{i}"} for i in (0, 1, 2, 10)],
        "current": {"wc-0": {"active": [f"1_{p}" for p in range(5)]}},
        "config": {"num_standby_replicas": 1},
    }
    shuffled = dict(
        request, members=list(reversed(request["members"])), tasks=list(reversed(request["tasks"]))
    )
    one = assign(AssignRequest.model_validate(request))
    two = assign(AssignRequest.model_validate(shuffled))
    assert one.model_dump() == two.model_dump()
    assert list(one.target) == ["wc-0", "wc-1", "wc-2", "wc-10"]
