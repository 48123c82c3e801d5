"""What a Kafka Streams group waits for, from its coordinator's members and the agents'
pages (``segue.operator.kstreams.waits``), and how the status words it."""

from __future__ import annotations

from dataclasses import replace

from segue.operator.kstreams.waits import REBALANCE_NEWS, WaitClock
from segue.operator.observe.agent import AgentReport
from segue.operator.observe.consumer_group import GroupMembers
from segue.operator.scaling import Published, Roles, decide
from segue.operator.scaling.group_wait import GoneMember, GroupWait
from segue.protocol.kstreams import Applied
from tests.operator.test_kstreams_glue import REPORT, world

A, B, C = (f"wc-{x}-StreamThread-1-consumer" for x in "abc")
AGENTS = {"wc-0": AgentReport((A,)), "wc-1": AgentReport((B,)), "wc-2": AgentReport((C,))}


def test_a_member_no_running_pod_claims_is_named_with_its_last_pod_once_it_is_news() -> None:
    clock = WaitClock()
    assert not clock.look(GroupMembers("Stable", (A, B, C)), AGENTS, 100.0).waiting
    gone = {"wc-0": AGENTS["wc-0"], "wc-1": AGENTS["wc-1"]}  # wc-2's pod is gone
    assert not clock.look(GroupMembers("Stable", (A, B, C)), gone, 101.0).waiting  # a moment
    wait = clock.look(GroupMembers("PreparingRebalance", (A, B, C)), gone, 101.0 + REBALANCE_NEWS)
    assert wait.gone == (GoneMember(C, "wc-2", REBALANCE_NEWS),)
    assert wait.rebalancing_for == 0.0  # the rebalance itself is not news yet
    later = clock.look(GroupMembers("PreparingRebalance", (A, B, C)), gone, 112.0)
    assert later.rebalancing_for == 112.0 - (101.0 + REBALANCE_NEWS)
    assert later.message() == (
        "the group has been in a rebalance (PreparingRebalance) for 9 s, and its members "
        "commit nothing until it ends; 1 member(s) of the group have no running pod: "
        f"{C} (pod wc-2) for 11 s; the group waits for each until its session ends "
        "(session.timeout.ms)"
    )
    # its session ended: the coordinator dropped it, the group is stable again
    done = clock.look(GroupMembers("Stable", (A, B)), gone, 113.0)
    assert not done.waiting
    assert done.message() == ""
    assert clock.unclaimed_since == {}
    assert C not in clock.claimed_by


def test_a_joiner_its_agent_names_a_look_later_is_not_gone() -> None:
    clock = WaitClock()
    early = {"wc-0": AGENTS["wc-0"]}
    assert not clock.look(GroupMembers("PreparingRebalance", (A, B)), early, 10.0).waiting
    assert not clock.look(GroupMembers("Stable", (A, B)), AGENTS, 11.0).waiting


def test_while_the_group_waits_the_app_is_not_settled_and_the_status_says_for_whom() -> None:
    settled = Published(
        4,
        {
            "wc-0": Roles(active=("0_0", "1_1")),
            "wc-1": Roles(active=("0_1", "1_2")),
            "wc-2": Roles(active=("0_2", "1_0")),
        },
    )
    before = world(settled, Applied(report=REPORT.id, generation=4))
    plan = decide(before)
    assert plan.assessment.condition("Balanced").status == "True", plan.assessment
    wait = GroupWait("PreparingRebalance", 0.0, (GoneMember(C, "wc-2", 30.0),))
    plan = decide(replace(before, group_wait=wait))
    scaling = plan.assessment.condition("Scaling")
    balanced = plan.assessment.condition("Balanced")
    assert (scaling.status, scaling.reason, scaling.message) == (
        "True",
        "GroupWaiting",
        wait.message(),
    )
    assert (balanced.status, balanced.reason) == ("False", "GroupWaiting"), balanced
    assert wait.message() in balanced.message
    assert plan.busy
    assert plan.assessment.phase != "Running"


def test_a_group_with_no_member_waits_for_nobody() -> None:
    """A suspended app's group (replicas 0) is Empty, not in a rebalance: never news."""
    clock = WaitClock()
    for t in (10.0, 20.0, 60.0):
        assert not clock.look(GroupMembers("Empty", ()), {}, t).waiting
    assert not clock.look(GroupMembers("Dead", ()), {}, 70.0).waiting
