"""A flow network loaded arc by arc (small) or through numpy arrays (large,
``flow.ARRAY_ARCS``) is the same network to the solver: the same decision either way."""

from __future__ import annotations

import pytest

from bench.assignor.scenarios import Case, pods
from segue.assignor import AssignRequest, assign, flow


@pytest.mark.parametrize(
    "case",
    [
        Case(
            "sizes and standbys",
            [(300, True), (60, False)],
            pods(10),
            pods(13),
            num_standby_replicas=1,
        ),
        Case("scale-in", [(200, True)], pods(12), pods(12), leaving=pods(3, 9)),
    ],
    ids=lambda case: case.name,
)
def test_arrays_and_single_arcs_give_the_same_decision(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = case.request()
    for i, task in enumerate(body["tasks"]):
        task["state_bytes"] = (i * 7919) % 10_000 + 1  # sizes that differ: many arc costs
    request = AssignRequest.model_validate(body)
    monkeypatch.setattr(flow, "ARRAY_ARCS", 1)
    arrays = assign(request)
    monkeypatch.setattr(flow, "ARRAY_ARCS", 10**9)
    single = assign(request)
    assert single == arrays
    assert single.stats.moves > 0  # a network was solved, not a trivial answer
