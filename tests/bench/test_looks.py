"""The per-look ruler replays captured worlds: that only measures the core if deciding a
captured world again gives the plan the simulator got (the core is pure)."""

from __future__ import annotations

import segue.pipeline.policies.segue as segue_policy
from bench.pipeline.looks import capture
from segue.operator.scaling import Plan, World, decide


def test_captured_worlds_decide_to_the_plans_the_simulator_got() -> None:
    plans: list[Plan] = []
    real = segue_policy.decide

    def keeping(world: World) -> Plan:
        plans.append(real(world))
        return plans[-1]

    segue_policy.decide = keeping
    try:
        worlds = capture(2, seed=1)  # capture wraps what it finds: the plans are kept too
    finally:
        segue_policy.decide = real
    assert segue_policy.decide is decide
    assert len(worlds) == len(plans) > 10
    assert [decide(w) for w in worlds] == plans
