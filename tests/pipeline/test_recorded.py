"""A history back into a scenario: from literal rows, and from histories the simulator
itself emits (simulate -> rows -> to_scenarios gives the scenario's shape back, and
replaying it costs the same)."""

from __future__ import annotations

import pytest

from segue.pipeline.policies.segue import SegueController
from segue.pipeline.recorded import to_scenarios
from segue.pipeline.scenario import LoadStep, PodLost, ScaleTo, Scenario, SubTopology
from segue.pipeline.simulate import simulate
from segue.protocol.history import (
    CopyRecord,
    HistoryRecord,
    MemberRecord,
    SubTopologyRecord,
    TaskRecord,
)

from .scenarios import S, scale_out

TOPOLOGY = [SubTopologyRecord(id=0, tasks=2), SubTopologyRecord(id=1, tasks=2, stateful=True)]


def member(name: str, state: str = "member", **roles: list[str]) -> MemberRecord:
    return MemberRecord.model_validate({"name": name, "state": state, **roles})


def rec(time: float, spec: int, members: list[MemberRecord], **more: object) -> HistoryRecord:
    return HistoryRecord.model_validate(
        {
            "namespace": "ns",
            "app": "wc",
            "time": time,
            "spec_replicas": spec,
            "generation": 1,
            "subtopologies": TOPOLOGY,
            "members": members,
            **more,
        }
    )


def sizes(records: int, processed: int | None = None) -> list[TaskRecord]:
    return [
        TaskRecord(task=t, changelog_records=records, changelog_bytes=11 * records, processed=n)
        for t, n in (("1_0", processed), ("1_1", processed))
    ]


def literal() -> list[HistoryRecord]:
    one = member("wc-0", active=["0_0", "1_0"])
    two = member("wc-1", active=["0_1", "1_1"])
    done = {"tasks": [*sizes(1000), *[TaskRecord(task=f"0_{p}", changelog_records=0,
            changelog_bytes=0, processed=500) for p in range(2)]]}  # fmt: skip
    return [
        rec(1000.0, 2, [member("wc-0", "starting")]),  # before the calm: not the start
        rec(1010.0, 2, [one, two], tasks=sizes(900)),
        rec(1015.0, 2, [one, two], **done),
        rec(1020.0, 3, [one, two], tasks=sizes(1000)),
        rec(1021.0, 3, [one, two, member("wc-2", "starting")]),
        rec(1024.0, 3, [one, two, member("wc-2", "joining")]),
        rec(
            1025.0,
            3,
            [one, two, member("wc-2", learning=["1_1"])],
            copies=[
                CopyRecord(task="1_1", member="wc-2", role="learning", lag=0, restore_rate=900)
            ],
        ),
        rec(1040.0, 3, [one, member("wc-1", "absent", active=["0_1", "1_1"]), member("wc-2")]),
    ]


def test_literal_rows_become_their_scenario() -> None:
    (s,) = to_scenarios(reversed(literal()))  # any order
    assert s.name == "ns/wc"
    assert s.replicas == 2
    assert s.duration == 30 + 60  # the span from the calm's start, and the tail
    assert s.events == [ScaleTo(at=10, replicas=3), PodLost(at=30, ordinal=1)]
    assert s.startup_delay == 4  # created in the step at 1020, running at 1024
    assert s.subtopologies == [
        SubTopology(id=0, partitions=2, state_bytes=[], record_bytes=1_000, restore_rate=20_000),
        SubTopology(
            id=1,
            partitions=2,
            state_bytes=[11_000, 11_000],  # as last seen up to the scale
            record_bytes=11,
            restore_rate=900,
        ),
    ]
    # 500 records per input task from 1010 to 1015, before the scale: in the state by then
    assert s.load == [LoadStep(at=0, rate=0)]
    assert s.pod_rate == 100  # each member processed 500 records in those 5 s


def test_rows_of_two_apps_become_two_scenarios() -> None:
    rows = literal()
    other = [r.model_copy(update={"app": "other"}) for r in rows]
    assert [s.name for s in to_scenarios([*rows, *other])] == ["ns/other", "ns/wc"]


def quiet(s: Scenario) -> Scenario:
    return s.model_copy(update={"load": [LoadStep(at=0, rate=0)]})


@pytest.mark.parametrize(
    "scenario",
    [
        quiet(scale_out(duration=120)),
        quiet(scale_out(replicas=4, to=2, duration=200)),
        quiet(
            scale_out(duration=200).model_copy(
                update={"events": [ScaleTo(at=10, replicas=4), PodLost(at=100, ordinal=1)]}
            )
        ),
    ],
    ids=["2-4", "4-2", "2-4-lost"],
)
def test_a_simulated_history_gives_its_scenario_back(scenario: Scenario) -> None:
    rows: list[HistoryRecord] = []
    ran = simulate(scenario, SegueController(), record=rows.append)
    (back,) = to_scenarios(rows)
    assert back.replicas == scenario.replicas
    assert back.events == scenario.events
    assert back.subtopologies == scenario.subtopologies  # sizes, record size, restore rate
    if any(isinstance(e, ScaleTo) and e.replicas > scenario.replicas for e in scenario.events):
        assert back.startup_delay == scenario.startup_delay
    again = simulate(back.model_copy(update={"duration": scenario.duration}), SegueController())
    assert again.handovers == ran.handovers
    assert (
        again.state_bytes_restored
        == ran.state_bytes_restored
        == pytest.approx(sum(r.bytes_restored for r in rows), abs=len(rows))
    )
    assert again.balance_times == ran.balance_times


def test_the_simulator_s_rows_carry_the_changelog_and_restore_counts() -> None:
    rows: list[HistoryRecord] = []
    simulate(quiet(scale_out(duration=60)), SegueController(), record=rows.append)
    assert {t.changelog_bytes for t in rows[0].tasks} == {S}
    assert rows[0].subtopologies == [SubTopologyRecord(id=0, tasks=8, stateful=True)]
    restored = sum(r.records_restored for r in rows)
    assert restored == pytest.approx(sum(r.bytes_restored for r in rows) / 1_000, abs=len(rows))
