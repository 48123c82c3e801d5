"""Issue 24's regression fleet: ``fleet(1000, seed=1)`` under Segue's default point.

A run that never balances within its hour must say why in the words of the status an
operator would show, and the why must be one the scenario explains: learners still
restoring at the end, at most ``maxWarmupReplicas`` at a time, with tasks still to move;
or actives restoring after a forced handover or a lost pod. Never a stuck plan, a task
that cannot run, or a reason the status does not give (docs/pipeline.md, "Never
balanced: what it means"). About two minutes of one core, so the fleet is replayed in
one process per core (the suite runs nothing else meanwhile).
"""

from __future__ import annotations

import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor

import pytest

from segue.pipeline.catalog import parse
from segue.pipeline.fleet import fleet
from segue.pipeline.simulate import simulate

pytestmark = pytest.mark.fleet

FLEET, SEED = 1000, 1

MEASURED = 38  # never balanced on this fleet when the check was written (issue 24's note)
STILL_MOVING = re.compile(
    r"Balanced False NotBalanced: \d+ task\(s\) not yet on their target member, (\d+) "
    r"learning; Scaling True Rebalancing: (\d+) learner\(s\) restoring, \d+ task\(s\) still "
    r"to move( \(maxWarmupReplicas=\d+ warm up at a time\))?"
)
RESTORING = re.compile(
    r"Balanced False ActiveRestoring: every task is on its target member, but \d+ active "
    r"task\(s\) restore their state before they process: \d+_\d+ on \S+ \([\d,]+ records behind\)"
)


def never_balanced(part: int, parts: int) -> dict[str, str | None]:
    """Every ``parts``-th scenario of the fleet from ``part`` on that never balances
    under Segue's default point, with the status's why."""
    spec = parse("segue()")[0]
    return {
        s.name: out.unbalanced
        for s in fleet(FLEET, SEED)[part::parts]
        if (out := simulate(s, spec.controller())).time_to_balance is None
    }


def test_segue_never_balances_only_where_the_scenario_explains_why() -> None:
    parts = min(2, os.cpu_count() or 1)
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked threads
    with ProcessPoolExecutor(parts, mp_context=spawn) as pool:
        found = pool.map(never_balanced, range(parts), [parts] * parts)
    never = {name: why for part in found for name, why in part.items()}
    assert len(never) <= MEASURED, sorted(never)
    unexplained = {}
    for name, why in never.items():
        moving = STILL_MOVING.fullmatch(why or "")
        if moving is not None and int(moving.group(2)) >= 1:
            continue  # learners restoring: progress in flight when the hour ended
        if RESTORING.match(why or ""):
            continue
        unexplained[name] = why
    assert not unexplained, unexplained
