"""The cost of one look of Segue's core, the ruler for making looks cheaper (issue 24).

Replays ``fleet(n, seed)`` under Segue's default policy once, keeping every
:class:`~segue.operator.scaling.World` the simulator hands the core, then times
``decide`` over exactly those worlds (the core is pure: the same worlds, the same plans)
``--repeat`` times and reports the median per look. This machine's CPU time wanders by
up to half between identical runs; for a change's effect, count instructions instead:

    valgrind --tool=callgrind .venv/bin/python -m bench.pipeline.looks --repeat 1

(and subtract a run with ``--repeat 0``, which only captures). Results: docs/pipeline.md,
"The fast path".
"""

from __future__ import annotations

import argparse
import statistics
import time

import segue.pipeline.policies.segue as segue_policy
from segue.operator.scaling import Plan, World, decide
from segue.pipeline.fleet import fleet
from segue.pipeline.simulate import simulate


def capture(scenarios: int, seed: int) -> tuple[list[World], list[Plan]]:
    """Every world the simulator handed Segue's core over ``fleet(scenarios, seed)``, and
    the plan it got for each."""
    worlds: list[World] = []
    plans: list[Plan] = []
    real = segue_policy.decide

    def keeping(world: World) -> Plan:
        worlds.append(world)
        plans.append(real(world))
        return plans[-1]

    segue_policy.decide = keeping
    try:
        for scenario in fleet(scenarios, seed):
            simulate(scenario, segue_policy.SegueController())
    finally:
        segue_policy.decide = real
    return worlds, plans


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenarios", type=int, default=20, help="fleet(n, seed) to capture from")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=5, help="timed passes over the looks")
    args = p.parse_args()
    worlds, _ = capture(args.scenarios, args.seed)
    tasks = statistics.median(len(w.end_offsets) for w in worlds) if worlds else 0
    print(
        f"{len(worlds)} looks over {args.scenarios} scenarios (median {tasks:.0f} stateful tasks)"
    )
    passes = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        for world in worlds:
            decide(world)
        passes.append((time.perf_counter() - started) / len(worlds))
    if passes:
        shown = ", ".join(f"{x * 1e3:.3f}" for x in passes)
        print(f"decide: median {statistics.median(passes) * 1e3:.3f} ms per look ({shown})")


if __name__ == "__main__":
    main()
