"""Calibration (issue 13, item 4): a real scale-out recorded through the history topic,
replayed in the simulator under Segue's own core, compared.

The operator runs with ``--history-topic``; WordCount (2 replicas, 6 partitions) gets
prefilled state, then is scaled 2 -> 4 through /scale and waited for until balanced.
The history read back from the topic becomes a scenario (``to_scenarios``), replayed
with the app's own policy at a 0.1 s tick. Tasks moved and state bytes restored must
match exactly, time to balance within 25%.

What makes exactness possible, said plainly: every changelog record has one size (the
words are ``w10000``..``w15999``, six bytes, and a count is an 8-byte int64: 14
bytes), so records times record size is the bytes a restore reads; learners restore
at a paced 250 records/s (``SEGUE_STANDBY_RESTORE_RATE``), so restoring takes seconds
and is measured, not lost between two steps; and no input flows during the
scale-out, so the changelogs hold still while learners read them (with input
flowing, what a learner reads depends on when it catches up relative to the writes:
bytes restored would depend on timing, in the real run and the replay alike).

The replay starts from the layout the real app had when the scale came (the history's
last calm row, ``Scenario.assignment``). Time to balance is, on both sides, until the
app is balanced by its own account: the operator's Balanced condition as the rows
record it, the simulator's balanced-and-quiet.

This test found a bug in the operator: a learner's half-restored store reported more
bytes than the whole task, so the task looked dearer to move and the next look switched
the learner to a neighbour, throwing its restored records away (real 42,140 bytes
restored against the replay's 27,440). A task's size is now its active owner's
(``segue.operator.scaling.placement.state_sizes``). That was half of it: the active's
size is its store's disk usage, which wobbles by a few bytes, and a neighbour a few
bytes smaller still won in two of three runs (41,860 bytes). The assignor now counts
what a learner has left to read, not its whole task (``TaskSpec.changelog_records``,
docs/assignor.md, "Costs"). The rows are printed, so a failure shows the learners' path.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from segue.operator.api import GROUP, PLURAL, VERSION, StreamApp
from segue.operator.world import policy
from segue.pipeline.policies.segue import SegueController
from segue.pipeline.recorded import to_scenarios
from segue.pipeline.scenario import ScaleTo
from segue.pipeline.simulate import simulate
from segue.protocol.history import HistoryRecord
from segue.stack.apps import Apps
from tests.worker.harness import create_topics, produce, read_committed

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import diagnose, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
LINES = 6000  # distinct words w10000..w15999: ~1000 changelog records per task
RESTORE_RATE = 250  # records/s a learner restores (SEGUE_STANDBY_RESTORE_RATE)
TICK = 0.1


@pytest.fixture
def recording(
    kafka: Any, kube: Any, namespace: str, tmp_path: Any, streamapp_crd: Any
) -> Iterator[tuple[OperatorProcess, str]]:
    """``segue operator --history-topic``, and that topic (one partition)."""
    topic = f"segue-history-{uuid.uuid4().hex[:6]}"
    create_topics(kafka.bootstrap_servers, {topic: 1})
    operator = OperatorProcess(kube.kubeconfig, namespace, tmp_path, "--history-topic", topic)
    yield operator.start(), topic
    operator.stop()


def test_a_recorded_scale_out_replays_in_the_simulator(
    kafka: Any, apps: Apps, recording: tuple[OperatorProcess, str], pod_runner: Any
) -> None:
    operator, topic = recording
    namespace = apps.namespace
    body, source, output = wordcount(
        kafka, "wc", 2, env={"SEGUE_STANDBY_RESTORE_RATE": str(RESTORE_RATE)}
    )
    apps.create(body)
    why = diagnose(apps, "wc", operator, pod_runner)
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    produce(
        kafka.bootstrap_servers,
        source,
        [(str(i), f"w{10_000 + i}") for i in range(LINES)],
    )
    read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= LINES, 120)
    time.sleep(3)  # the prefill is counted; nothing more flows
    apps.scale("wc", 4)
    wall = wait_for("4 pods balanced", lambda: apps.balanced("wc", 4), 180, why)
    obj = apps.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "wc")
    app_policy = policy(StreamApp.from_object(obj))

    def recorded(records: list[Any]) -> bool:
        rows = [HistoryRecord.model_validate_json(v) for *_, v in records]
        return any(r.spec_replicas == 4 and r.balanced for r in rows)

    records = read_committed(kafka.bootstrap_servers, topic, recorded, 60)
    rows = [HistoryRecord.model_validate_json(v) for *_, v in records]
    assert {(r.namespace, r.app) for r in rows} == {(namespace, "wc")}
    (scenario,) = to_scenarios(rows)
    scaled = next(i for i, r in enumerate(rows) if r.spec_replicas == 4)
    done = next(r for r in rows[scaled:] if r.balanced)  # the operator said Balanced
    real_moved = sum(r.handovers for r in rows[scaled:])
    real_bytes = sum(r.bytes_restored for r in rows[scaled:])
    real_time = done.time - rows[scaled].time
    assert [type(e) for e in scenario.events] == [ScaleTo]
    sim = simulate(scenario, SegueController(app_policy), tick=TICK)
    assert sim.time_to_balance is not None
    print(
        f"calibration 2->4, {LINES} lines prefilled: "
        f"real {real_moved} tasks moved, {real_bytes} bytes restored, "
        f"{real_time:.2f}s to balance (wall {wall:.1f}s); "
        f"simulated {sim.handovers}, {sim.state_bytes_restored:.0f}, {sim.time_to_balance:.2f}s; "
        f"scenario startup {scenario.startup_delay:.2f}s, "
        f"restore {scenario.subtopologies[1].restore_rate:.0f} records/s, "
        f"record {scenario.subtopologies[1].record_bytes} B, "
        f"state {sum(scenario.subtopologies[1].state_bytes)} B"
    )
    for r in rows[scaled - 1 :]:
        print(
            f"{r.time - rows[scaled].time:7.2f} gen {r.generation} moved {r.handovers} "
            f"restored {r.records_restored}/{r.bytes_restored}B balanced {r.balanced} "
            + " ".join(f"{m.name[-6:]}:{m.state[0]}:a{m.active}l{m.learning}" for m in r.members)
        )
    assert real_bytes > 0
    assert sim.handovers == real_moved
    assert round(sim.state_bytes_restored) == real_bytes
    assert abs(sim.time_to_balance - real_time) <= 0.25 * real_time
