"""The soak's script: a seeded list of faults and scale events, decided before the run.

Pure (no clock, no I/O): the same seed gives the same events, so a soak that found
something can be run again event for event. ``run`` plays the list against a live
stack; this module only decides what happens when, and the tally of what came out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

Kind = Literal["scale", "kill", "broker"]
WEIGHTS: dict[Kind, int] = {"scale": 5, "kill": 3, "broker": 2}


@dataclass(frozen=True)
class Event:
    at: float  # seconds after the soak's start
    kind: Kind
    arg: int  # scale: the new replica count; kill: which pod (index mod replicas); broker: 0


def schedule(
    seed: int, minutes: float, every: float, replicas: int, max_replicas: int
) -> list[Event]:
    """One event every ``every`` seconds (jittered by up to a fifth), none in the last
    interval so the app can settle before the final count."""
    rng = random.Random(seed)
    kinds = list(WEIGHTS)
    events: list[Event] = []
    at = every
    while at < minutes * 60 - every:
        kind = rng.choices(kinds, [WEIGHTS[k] for k in kinds])[0]
        if kind == "scale":
            arg = rng.choice([n for n in range(1, max_replicas + 1) if n != replicas])
            replicas = arg
        elif kind == "kill":
            arg = rng.randrange(max_replicas)
        else:
            arg = 0
        events.append(Event(round(at, 1), kind, arg))
        at += every * rng.uniform(0.8, 1.2)
    return events


def lost_and_duplicated(counts: dict[str, list[int]], sent: dict[str, int]) -> tuple[int, int]:
    """Tally's output per key should be the counts 1..n for n records sent: a count
    missing is a record lost, one seen twice (or past n) a record counted twice."""
    lost = duplicated = 0
    for key in set(sent) | set(counts):
        n, got = sent.get(key, 0), counts.get(key, [])
        seen = set(got)
        lost += sum(1 for c in range(1, n + 1) if c not in seen)
        duplicated += len(got) - len(seen) + sum(1 for c in seen if c > n)
    return lost, duplicated


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]
