"""The boundary schemas: rows survive a round trip, and a bad row says which field."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from segue.pipeline.scenario import PartitionsExpanded, PodLost, Scenario

from .scenarios import scale_out


def test_scenario_round_trips_through_json() -> None:
    s = scale_out()
    s = s.model_copy(
        update={
            "events": [
                *s.events,
                PodLost(at=50, ordinal=1),
                PartitionsExpanded(at=60, subtopology=0, partitions=16),
            ]
        }
    )
    back = Scenario.model_validate_json(s.model_dump_json())
    assert back == s
    assert [e.kind for e in back.events] == ["scale", "pod_lost", "expand"]


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        ({"subtopologies": [{"id": 0, "partitions": 0}]}, "subtopologies.0.partitions"),
        ({"events": [{"kind": "scale", "at": 5, "replicas": -1}]}, "events.0.scale.replicas"),
        ({"events": [{"kind": "reboot", "at": 5}]}, "events.0"),
        ({"version": 2}, "version"),
        ({"replicas": "many"}, "replicas"),
    ],
)
def test_a_bad_row_names_its_field(patch: dict[str, object], where: str) -> None:
    row = scale_out().model_dump() | patch
    with pytest.raises(ValidationError) as err:
        Scenario.model_validate(row)
    locs = [".".join(str(x) for x in e["loc"]) for e in err.value.errors()]
    assert where in locs, locs


def test_state_sizes_must_match_partitions() -> None:
    row = scale_out().model_dump()
    row["subtopologies"][0]["state_bytes"] = [1, 2]
    with pytest.raises(ValidationError, match="state_bytes has 2 entries for 8 partitions"):
        Scenario.model_validate(row)


def test_an_expansion_must_name_a_known_subtopology() -> None:
    row = scale_out().model_dump()
    row["events"] = [{"kind": "expand", "at": 1, "subtopology": 7, "partitions": 16}]
    with pytest.raises(ValidationError, match="unknown subtopology 7"):
        Scenario.model_validate(row)


def test_load_is_a_step_function() -> None:
    row = scale_out().model_dump() | {"load": [{"at": 0, "rate": 10.0}, {"at": 100, "rate": 50}]}
    s = Scenario.model_validate(row)
    assert (s.rate_at(0), s.rate_at(99), s.rate_at(100), s.rate_at(1e6)) == (10, 10, 50, 50)
