"""The per-look ruler replays captured worlds: that only measures the core if deciding a
captured world again gives the plan the simulator got (the core is pure)."""

from __future__ import annotations

import segue.pipeline.policies.segue as segue_policy
from bench.pipeline.looks import capture
from segue.operator.scaling import decide


def test_captured_worlds_decide_to_the_plans_the_simulator_got() -> None:
    worlds, plans = capture(2, seed=1)
    assert segue_policy.decide is decide  # the capture put the core back
    assert len(worlds) == len(plans) > 10
    assert [decide(w) for w in worlds] == plans
