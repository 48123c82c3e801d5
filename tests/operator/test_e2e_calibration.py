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
at a paced 500 records/s (``SEGUE_STANDBY_RESTORE_RATE``), so restoring takes seconds
and is measured, not lost between two steps; and no input flows during the
scale-out, so the changelogs hold still while learners read them (with input
flowing, what a learner reads depends on when it catches up relative to the writes:
bytes restored would depend on timing, in the real run and the replay alike).

Not yet exact (xfail, assertions unchanged): a Scenario has no initial assignment, and
the simulator's ``initial()`` deals tasks round-robin by partition, while the real
app starts from the assignment Segue published; the replay therefore starts from a
different layout and moves other tasks (measured: 12 handovers simulated vs 6 real).
Reading the first row's assignment into the scenario needs a field and ``initial()``
to honour it (pipeline/state.py). The real operator also re-planned a learner once
(1_1 -> 1_2 on the new pod), restoring 500 records it then dropped.
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
from segue.pipeline.recorded import balanced, to_scenarios
from segue.pipeline.scenario import ScaleTo
from segue.pipeline.simulate import simulate
from segue.protocol.history import HistoryRecord
from tests.worker.harness import create_topics, produce, read_committed

from .e2e import Apps, OperatorProcess, wait_for
from .test_e2e_scaling import diagnose, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
LINES = 6000  # distinct words w10000..w15999: ~1000 changelog records per task
RESTORE_RATE = 500  # records/s a learner restores (SEGUE_STANDBY_RESTORE_RATE)
TICK = 0.1


def settled(row: HistoryRecord) -> bool:
    return balanced(row) and all(c.lag == 0 for c in row.copies)


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


@pytest.mark.xfail(
    reason="the replay starts from a round-robin deal, not the recorded assignment (docstring)",
    strict=True,
)
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
        return any(r.spec_replicas == 4 and settled(r) for r in rows)

    records = read_committed(kafka.bootstrap_servers, topic, recorded, 60)
    rows = [HistoryRecord.model_validate_json(v) for *_, v in records]
    assert {(r.namespace, r.app) for r in rows} == {(namespace, "wc")}
    (scenario,) = to_scenarios(rows)
    scaled = next(i for i, r in enumerate(rows) if r.spec_replicas == 4)
    done = next(r for r in rows[scaled:] if settled(r))
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
    assert real_bytes > 0
    assert sim.handovers == real_moved
    assert round(sim.state_bytes_restored) == real_bytes
    assert abs(sim.time_to_balance - real_time) <= 0.25 * real_time
