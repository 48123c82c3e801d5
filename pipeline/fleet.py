"""A seeded synthetic fleet: ``fleet(n, seed)`` scenarios with plausible shapes.

Every draw comes from one ``random.Random(seed)`` (never the global generator), so a
fleet is a pure function of (n, seed) and scenario ``i`` depends only on the draws
before it. The distributions (docs/pipeline.md, "Synthetic fleets") are guesses at a
typical fleet, not measurements: 1-3 sub-topologies, 4-64 partitions (powers of two
are likelier), per-task state log-normal around 100 MB, restore 5k-50k records/s,
a pod processing 20k-200k records/s, load in steps, scale events, pod losses and, in
one app in ten, a doubling of the partitions of one sub-topology (seed 004).
"""

from __future__ import annotations

import math
import random

from .scenario import (
    LoadStep,
    PartitionsExpanded,
    PodLost,
    ScaleTo,
    Scenario,
    ScenarioEvent,
    SubTopology,
)

DURATION = 3600.0


def fleet(n: int, seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    return [scenario(rng, f"s{seed}-{i}") for i in range(n)]


def scenario(rng: random.Random, name: str) -> Scenario:
    subs = [_subtopology(rng, i) for i in range(rng.randint(1, 3))]
    most = max(s.partitions for s in subs)
    replicas = rng.randint(1, min(8, most))
    events = _events(rng, subs, replicas)
    base = rng.choice([50.0, 100.0, 200.0, 500.0])
    load = [LoadStep(at=0, rate=base)]
    for _ in range(rng.randint(0, 3)):
        load.append(
            LoadStep(at=round(rng.uniform(60, DURATION - 60)), rate=base * rng.uniform(0.3, 4))
        )
    return Scenario(
        name=name,
        app="app" + name.replace("-", "x"),
        replicas=replicas,
        duration=DURATION,
        pod_rate=round(math.exp(rng.uniform(math.log(20_000), math.log(200_000)))),
        startup_delay=rng.choice([10.0, 20.0, 30.0, 60.0]),
        subtopologies=subs,
        load=sorted(load, key=lambda s: s.at),
        events=events,
    )


def _subtopology(rng: random.Random, sid: int) -> SubTopology:
    partitions = rng.choice([4, 6, 8, 12, 16, 16, 24, 32, 32, 48, 64])
    stateful = sid > 0 or rng.random() < 0.6
    median = math.exp(rng.gauss(math.log(100e6), 1.0))
    sizes = [int(math.exp(rng.gauss(math.log(median), 0.5))) for _ in range(partitions)]
    return SubTopology(
        id=sid,
        partitions=partitions,
        state_bytes=sizes if stateful else [],
        record_bytes=rng.choice([100, 500, 1_000, 4_000]),
        restore_rate=round(rng.uniform(5_000, 50_000)),
        changelog_ratio=rng.choice([0.0, 0.1, 0.5, 1.0]) if stateful else 0.0,
    )


def _events(rng: random.Random, subs: list[SubTopology], replicas: int) -> list[ScenarioEvent]:
    events: list[ScenarioEvent] = []
    now = replicas
    most = max(s.partitions for s in subs)
    for _ in range(rng.randint(1, 3)):
        now = max(1, min(most, now + rng.choice([-2, -1, 1, 1, 2, 3, now])))
        events.append(ScaleTo(at=round(rng.uniform(60, DURATION - 600)), replicas=now))
    if rng.random() < 0.3:
        events.append(
            PodLost(at=round(rng.uniform(60, DURATION - 600)), ordinal=rng.randrange(replicas))
        )
    if rng.random() < 0.1:
        sub = rng.choice(subs)
        events.append(
            PartitionsExpanded(
                at=round(rng.uniform(60, DURATION - 600)),
                subtopology=sub.id,
                partitions=2 * sub.partitions,
            )
        )
    return sorted(events, key=lambda e: e.at)
