"""The synthetic fleet is a pure function of (n, seed) and its shapes are plausible."""

from __future__ import annotations

from segue.pipeline.fleet import fleet
from segue.pipeline.scenario import PartitionsExpanded, PodLost, ScaleTo, Scenario


def test_same_seed_same_fleet() -> None:
    assert fleet(20, seed=3) == fleet(20, seed=3)


def test_other_seeds_other_fleets() -> None:
    a, b = fleet(20, seed=3), fleet(20, seed=4)
    assert a != b
    assert [s.replicas for s in a] != [s.replicas for s in b]


def test_a_prefix_is_the_same_fleet() -> None:
    assert fleet(5, seed=9) == fleet(20, seed=9)[:5]


def test_shapes_are_within_the_documented_ranges() -> None:
    scenarios = fleet(200, seed=1)
    for s in scenarios:
        Scenario.model_validate(s.model_dump())  # every row passes its own schema
        assert 1 <= len(s.subtopologies) <= 3
        assert all(4 <= t.partitions <= 64 for t in s.subtopologies)
        assert any(isinstance(e, ScaleTo) for e in s.events)
    kinds = {type(e) for s in scenarios for e in s.events}
    assert {ScaleTo, PodLost, PartitionsExpanded} <= kinds
    sizes = sorted(b for s in scenarios for t in s.subtopologies for b in t.state_bytes)
    assert sizes[len(sizes) // 100] < 20e6  # a long tail both ways
    assert sizes[-len(sizes) // 100] > 1e9
