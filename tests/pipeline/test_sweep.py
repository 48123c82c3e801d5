"""Sweeps of Segue's policy, and what a sweep point changes in a run."""

from __future__ import annotations

import pytest

from segue.operator.scaling import Policy
from segue.pipeline.policies.segue import SegueController
from segue.pipeline.simulate import simulate
from segue.pipeline.sweep import sweep

from .scenarios import scale_out


def test_a_sweep_is_the_product_of_its_axes_in_order() -> None:
    points = sweep(max_warmup_replicas=[1, 2], learner_promotion=["eager", "batch"])
    assert [(p.max_warmup_replicas, p.learner_promotion) for p in points] == [
        (1, "eager"),
        (1, "batch"),
        (2, "eager"),
        (2, "batch"),
    ]
    assert all(p.acceptable_recovery_lag == Policy().acceptable_recovery_lag for p in points)


def test_a_sweep_names_a_field_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="not Policy fields: warmups"):
        sweep(warmups=[1])


def test_fewer_warmups_take_longer_to_balance() -> None:
    one, four = (
        simulate(scale_out(duration=200), SegueController(p))
        for p in sweep(max_warmup_replicas=[1, 4])
    )
    assert one.time_to_balance is not None
    assert four.time_to_balance is not None
    assert one.time_to_balance > four.time_to_balance
    assert one.state_bytes_restored == four.state_bytes_restored  # the same tasks moved
