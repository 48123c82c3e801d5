"""The history record, the operator-pipeline contract: rows survive JSON, a bad row
says which field, and an app's rows share one Kafka key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from segue.protocol.history import (
    CopyRecord,
    HistoryRecord,
    MemberRecord,
    SubTopologyRecord,
    TaskRecord,
    history_key,
)


def row() -> HistoryRecord:
    return HistoryRecord(
        namespace="prod",
        app="wc",
        time=12.0,
        spec_replicas=4,
        generation=3,
        subtopologies=[
            SubTopologyRecord(id=0, tasks=2),
            SubTopologyRecord(id=1, tasks=2, stateful=True),
        ],
        members=[MemberRecord(name="wc-0", state="member", active=["0_0"], learning=["1_1"])],
        copies=[CopyRecord(task="1_1", member="wc-0", role="learning", lag=500, restore_rate=2e4)],
        tasks=[TaskRecord(task="1_1", changelog_records=900, changelog_bytes=9_900, processed=40)],
        handovers=1,
        records_restored=400,
        bytes_restored=4_400,
    )


def test_a_history_record_round_trips_through_json() -> None:
    r = row()
    assert HistoryRecord.model_validate(r.model_dump()) == r
    assert HistoryRecord.model_validate_json(r.model_dump_json()) == r


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        ({"version": 2}, "version"),
        ({"spec_replicas": -1}, "spec_replicas"),
        ({"members": [{"name": "wc-0", "state": "gone"}]}, "members.0.state"),
        ({"tasks": [{"task": "1_1", "changelog_records": -1, "changelog_bytes": 0}]},
         "tasks.0.changelog_records"),
        ({"surprise": 1}, "surprise"),
    ],
)  # fmt: skip
def test_a_bad_row_names_its_field(patch: dict[str, object], where: str) -> None:
    with pytest.raises(ValidationError) as err:
        HistoryRecord.model_validate(row().model_dump() | patch)
    locs = [".".join(str(x) for x in e["loc"]) for e in err.value.errors()]
    assert where in locs, locs


def test_an_app_s_rows_share_a_key() -> None:
    assert history_key("prod", "wc") == "prod/wc"
