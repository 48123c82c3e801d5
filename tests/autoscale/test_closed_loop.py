"""The anti-thrash proof: the real signal and the real HPA algorithm in a closed loop
around a simulated app whose learners take ``warmup`` seconds before they add capacity.

Under an input step that needs N members, an HPA on ``replicas_needed`` (AverageValue 1)
settles at N, never above, never reversing, in at most two scale-ups; plain records-lag
(KEDA's Kafka scaler: AverageValue ``lagThreshold`` per replica) overshoots, which shows
the harness can tell the two apart. The scenarios keep the backlog of the warm-up
drainable within the catch-up time at N members, so N is the true need."""

from __future__ import annotations

import pytest

from .hpa import HPA
from .sim import Scenario, run


@pytest.mark.parametrize("warmup", [10.0, 30.0, 60.0, 120.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replicas_needed_settles_at_n_without_overshoot(warmup: float, seed: int) -> None:
    scenario = Scenario(warmup=warmup, seed=seed)
    trace = run(scenario, lambda s: s.replicas_needed, HPA(1.0, "AverageValue", 2, 12))
    n = scenario.needed
    assert trace.peak == n, trace.replicas
    assert trace.final == n, trace.replicas
    assert trace.reversals == 0, trace.replicas
    assert trace.changes <= 2, trace.replicas
    assert trace.generations <= 4  # two per scale-up: learners, then their handover
    assert trace.settle_time(scenario.step_at) <= 60.0
    assert trace.lags[-1] < scenario.after * 2  # caught up: a pipeline's worth, not a backlog


@pytest.mark.parametrize(("before", "after", "capacity"), [(200, 700, 250), (700, 1700, 400)])
def test_other_steps(before: float, after: float, capacity: float) -> None:
    scenario = Scenario(before=before, after=after, capacity=capacity, replicas=2, warmup=45)
    trace = run(scenario, lambda s: s.replicas_needed, HPA(1.0, "AverageValue", 2, 12))
    assert trace.peak == trace.final == scenario.needed, trace.replicas
    assert trace.reversals == 0, trace.replicas


def test_plain_records_lag_overshoots_and_oscillates() -> None:
    scenario = Scenario(warmup=30.0)
    trace = run(scenario, lambda s: float(s.lag_records), HPA(1000.0, "AverageValue", 2, 12))
    assert trace.peak > scenario.needed, trace.replicas
    assert trace.reversals >= 1, trace.replicas


def test_counting_learners_as_capacity_thrashes() -> None:
    """The same maths with capacity per pod instead of per active member: learners look
    like pods that do not help, so each warm-up asks for more."""

    def per_pod(s: object) -> float:
        from segue.operator.autoscale import AppSignal

        assert isinstance(s, AppSignal)
        per = s.processing_rate / s.replicas
        return (s.input_rate + s.lag_records / 300.0) / per if per else float(s.replicas)

    scenario = Scenario(warmup=60.0)
    trace = run(scenario, per_pod, HPA(1.0, "AverageValue", 2, 12))
    assert trace.peak > scenario.needed, trace.replicas


def test_a_drop_in_input_scales_down_to_what_it_needs() -> None:
    scenario = Scenario(before=1400, after=500, replicas=5, warmup=30)
    trace = run(scenario, lambda s: s.replicas_needed, HPA(1.0, "AverageValue", 2, 12))
    assert trace.final == scenario.needed, trace.replicas
    assert trace.peak == 5, trace.replicas
