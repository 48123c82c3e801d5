"""A Kafka Streams handover is done, and the app ``Balanced``, only once the new owner
runs the task: the group applied the published generation and the task's changelog is
no longer read by the new owner's restore consumer (``observe_pods``)."""

from __future__ import annotations

from dataclasses import replace

from segue.operator.kstreams.answer import BUSY_PROBE, SETTLED_PROBE, followup_delay
from segue.operator.kstreams.group import Group
from segue.operator.kstreams.pods import observe_pods
from segue.operator.observe.agent import AgentReport
from segue.operator.scaling import Handover, Memory, Published, Roles, World, decide
from segue.protocol.kstreams import Applied
from tests.operator.test_kstreams_glue import ENDS, REPORT, state
from tests.operator.test_kstreams_glue import world as glue_world

CONSUMERS = {"wc-0": "wc-a", "wc-1": "wc-b", "wc-2": "wc-c"}
# 1_1 handed over from wc-0 to wc-2, its learner there (the report's standby)
HANDED = Published(
    5,
    {
        "wc-0": Roles(active=("0_0", "1_0")),
        "wc-1": Roles(active=("0_2", "1_2")),
        "wc-2": Roles(active=("0_1", "1_1")),
    },
)


def agents(restoring: dict[tuple[str, int], int]) -> dict[str, AgentReport]:
    """Each pod's agent page; wc-2's restore consumer reads ``restoring``."""
    return {
        m: AgentReport((f"{c}-StreamThread-1-consumer",), restoring if m == "wc-2" else {})
        for m, c in CONSUMERS.items()
    }


def world(applied: int, restoring: dict[tuple[str, int], int]) -> World:
    """The glue tests' world, with wc-2's restore consumer reading ``restoring``."""
    group = Group(REPORT, Applied(report=REPORT.id, generation=applied))
    return replace(
        glue_world(HANDED, Applied(report=REPORT.id, generation=applied)),
        pods=observe_pods({n: state(n) for n in CONSUMERS}, agents(restoring), group, HANDED, ENDS),
        memory=Memory(handovers={"1_1": Handover("wc-2", 997.0)}),
    )


def test_a_kstreams_handover_waits_for_the_group_and_the_restore_then_is_done() -> None:
    # the group still runs generation 4: wc-2 holds 1_1 as the standby its client reported
    before = world(4, {})
    assert before.pods["wc-2"].roles["1_1"] == "standby"
    assert not before.pods["wc-2"].runs("1_1")
    plan = decide(before)
    assert "1_1" in plan.memory.handovers
    assert plan.assessment.condition("Balanced").status == "False"
    assert followup_delay(plan, before) == BUSY_PROBE  # for the group to take it up

    # applied, and its restore consumer still reads the changelog's tail
    restoring = world(5, {("wc-counts-changelog", 1): 40})
    pod = restoring.pods["wc-2"]
    assert pod.roles["1_1"] == "active"
    assert pod.restoring == frozenset({"1_1"})
    assert pod.processing == frozenset({"0_1"})
    plan = decide(restoring)
    assert "1_1" in plan.memory.handovers
    assert not plan.handovers_done
    condition = plan.assessment.condition("Balanced")
    assert (condition.status, condition.reason) == ("False", "ActiveRestoring"), condition
    assert "1_1 on wc-2 (40 records behind)" in condition.message
    assert plan.assessment.phase == "Scaling"
    assert plan.busy
    # the group took the handover up: nothing a rebalance would hasten
    assert followup_delay(plan, restoring) == SETTLED_PROBE

    # restored: it runs the task (Kafka Streams keeps the changelog partition paused in
    # the restore consumer, at lag 0)
    assert world(5, {}).pods["wc-2"].runs("1_1")
    running = world(5, {("wc-counts-changelog", 1): 0})
    assert running.pods["wc-2"].runs("1_1")
    assert running.pods["wc-2"].restoring == frozenset()
    plan = decide(running)
    assert dict(plan.handovers_done) == {"1_1": 3.0}
    assert not plan.memory.handovers
    assert plan.assessment.condition("Balanced").status == "True", plan.assessment
    assert plan.assessment.phase == "Running"
