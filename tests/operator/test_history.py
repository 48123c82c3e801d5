"""The operator's history record of a step (segue.operator.history), pure: the scaling
state machine scales 2 -> 4 in the scaling tests' step world, workers report counters,
and the rows say what happened: only steps that changed something, deltas that add
up, handovers as published, and a history the pipeline reads back as that scale-out."""

from __future__ import annotations

from segue.operator.history import Seen, handovers, step_record
from segue.operator.observe.scrape import WorkerReport
from segue.pipeline.recorded import to_scenarios
from segue.pipeline.scenario import ScaleTo
from segue.protocol.history import HistoryRecord
from tests.scaling.sim import Sim

RECORD_BYTES = 11


def reports(sim: Sim) -> dict[str, WorkerReport]:
    """What each live pod's /metrics says: records restored as offsets reached."""
    out = {}
    for name, pod in sim.pods.items():
        if pod.alive:
            out[name] = WorkerReport(
                restored_records=dict(pod.restored),
                restored_bytes={t: RECORD_BYTES * n for t, n in pod.restored.items()},
                changelog_records=dict(pod.restored),
                changelog_bytes={t: RECORD_BYTES * n for t, n in pod.restored.items()},
                processed={t: 5 for t in pod.restored},
            )
    return out


def record(sim: Sim, seen: Seen | None) -> tuple[HistoryRecord | None, Seen | None]:
    world, scraped = sim.world(), reports(sim)
    plan = sim.step()
    return step_record("ns", world, plan, scraped, seen)


def test_a_scale_out_is_recorded_step_by_step_and_reads_back_as_itself() -> None:
    sim = Sim(replicas=2, rate=300)
    rows: list[HistoryRecord] = []
    seen: Seen | None = None
    published = []
    for i in range(60):
        if i == 10:
            sim.replicas = 4
        before = sim.published
        row, seen = record(sim, seen)
        published.append(handovers(before, sim.published))
        if row is not None:
            rows.append(HistoryRecord.model_validate_json(row.model_dump_json()))
    assert rows[0].subtopologies[0].tasks == 6
    assert len(rows) < 40  # quiet steps are not recorded
    assert sum(r.handovers for r in rows) == sum(published) > 0
    total = sum(n for p in sim.pods.values() for n in p.restored.values())
    assert sum(r.records_restored for r in rows) == total
    assert sum(r.bytes_restored for r in rows) == RECORD_BYTES * total
    last = rows[-1]
    assert [m.state for m in last.members] == ["member"] * 4
    assert {t.changelog_records for t in last.tasks} == {sim.changelog_end}
    (scenario,) = to_scenarios(rows)
    assert scenario.name == "ns/wc"
    assert scenario.replicas == 2
    assert [type(e) for e in scenario.events] == [ScaleTo]
    assert scenario.subtopologies[0].record_bytes == RECORD_BYTES
    assert scenario.subtopologies[0].state_bytes == [RECORD_BYTES * sim.changelog_end] * 6


def test_a_step_that_changed_nothing_keeps_the_last_basis() -> None:
    sim = Sim(replicas=2)
    sim.run()
    row, seen = record(sim, None)
    assert row is not None  # an app's first step is always recorded
    again, kept = record(sim, seen)
    assert again is None
    assert kept is seen


def test_a_counter_that_went_down_restarted_with_its_pod() -> None:
    sim = Sim(replicas=2)
    sim.run()
    _, seen = record(sim, None)
    assert seen is not None
    pod, task = next(iter(seen.counters))
    lowered = {**seen.counters, (pod, task): (10**9, 10**9, 10**9)}
    row, _ = record(sim, Seen(seen.time, seen.signature, lowered))
    assert row is not None
    assert row.records_restored == seen.counters[(pod, task)][0]  # all of it is new


def test_a_learner_is_behind_by_its_whole_changelog_until_it_reports() -> None:
    """A new pod's learner that has restored nothing is not recorded as caught up."""
    sim = Sim(replicas=2, rate=300)
    seen: Seen | None = None
    first: dict[tuple[str, str], int] = {}
    for i in range(40):
        if i == 5:
            sim.replicas = 4
        row, seen = record(sim, seen)
        for c in row.copies if row else ():
            if c.role == "learning" and c.member in ("wc-2", "wc-3"):
                first.setdefault((c.task, c.member), c.lag)
    assert first
    assert set(first.values()) == {sim.changelog_end}
