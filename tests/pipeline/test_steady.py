"""The fast path skips alike ticks in closed form: it must change no metric.

Each scenario runs twice under each policy, tick by tick (``fast=False``) and with the
fast path, and every metric must agree (floats to 1e-9: ``k * x`` is not ``x`` added
``k`` times). The fleet slices are picked for what breaks a careless fast path: pod
losses, partition expansions (which no watch sees), load steps and standbys.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict

import pytest

from segue.operator.scaling import Policy
from segue.pipeline.fleet import fleet
from segue.pipeline.policies.base import Controller
from segue.pipeline.policies.eager import EagerController
from segue.pipeline.policies.keda import KedaController
from segue.pipeline.policies.kip441 import Kip441Controller
from segue.pipeline.policies.segue import SegueController
from segue.pipeline.scenario import PartitionsExpanded, PodLost, Scenario
from segue.pipeline.simulate import simulate

from .scenarios import looks, scale_out

pytestmark = pytest.mark.fleet

POLICIES: dict[str, Callable[[], Controller]] = {
    "segue": SegueController,
    "segue-standby": lambda: SegueController(Policy(num_standby_replicas=1)),
    "eager": EagerController,
    "kip441": Kip441Controller,
    "keda": KedaController,
}


def _picked() -> list[Scenario]:
    """Two plain scenarios and every one with a pod loss or an expansion, from seed 7."""
    out = list(fleet(2, seed=7))
    for s in fleet(24, seed=7)[2:]:
        if any(isinstance(e, PodLost | PartitionsExpanded) for e in s.events):
            out.append(s)
    return out


SCENARIOS = _picked()
# Segue's core costs more per look: the slices that once caught the fast path out
# (an expansion no watch sees, a pod loss) and a plain scale.
SEGUE_SCENARIOS = [s for s in SCENARIOS if s.name in {"s7-0", "s7-2", "s7-6", "s7-12", "s7-20"}]


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_the_fast_path_changes_no_metric(policy: str) -> None:
    make = POLICIES[policy]
    for scenario in SEGUE_SCENARIOS if policy.startswith("segue") else SCENARIOS:
        every = make()
        if isinstance(every, SegueController):
            every.skip_fixed_points = False  # every look a busy operator takes, too
        slow = asdict(simulate(scenario, every, fast=False))
        fast = asdict(simulate(scenario, make()))
        differ = {k: (fast[k], slow[k]) for k in slow if not _same(fast[k], slow[k])}
        assert not differ, f"{scenario.name} under {policy}: {differ}"


def test_the_slices_exercise_what_they_are_picked_for() -> None:
    for picked in (SCENARIOS, SEGUE_SCENARIOS):
        kinds = {type(e).__name__ for s in picked for e in s.events}
        assert {"PodLost", "PartitionsExpanded", "ScaleTo"} <= kinds


def test_the_fast_path_skips_most_ticks() -> None:
    """Not a timing: the number of times the policy is asked to look."""
    calls = {
        fast: looks(scale_out(duration=3600), SegueController, fast=fast)[0]
        for fast in (True, False)
    }
    assert calls[False] == 3600
    assert calls[True] < 3600 / 10
