"""The show as a script: a list of steps, each one thing a user or the world does to a
running StreamApp, then a wait until the operator has settled it.

A step is text (``scale=6``, ``kill``, ``partitions=2``, ``burst=30000``) so a script
fits on a command line (``segue stack demo --steps ...``) and a soak run can draw
steps at random from a seed (:func:`random_script`). :func:`run_script` plays one on a
:class:`Stage`, the few actions the show's cluster offers (``show.Cluster``), and
reports each step's start and end through ``say``. The waiting is the stage's too:
``settle`` returns once the app is balanced on the replicas it should have.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

KINDS = ("scale", "kill", "partitions", "burst")
# The burst must outrun 3 pods by enough that the signal asks for more pods within
# catchUpSeconds (10 s): 3 pods drained 60,000 lines in about 2 s, the HPA holding.
FULL = ("scale=6", "scale=3", "kill", "partitions=2", "burst=1000000")
QUICK = ("scale=4", "kill", "scale=2")


class StepError(ValueError):
    """A step that does not parse, naming it."""


@dataclass(frozen=True)
class Step:
    kind: str
    value: int = 0

    def __str__(self) -> str:
        return self.kind if self.kind == "kill" else f"{self.kind}={self.value}"

    def describe(self) -> str:
        return {
            "scale": f"kubectl scale streamapp/wordcount --replicas={self.value}",
            "kill": "kubectl delete pod <a worker> --grace-period=0 --force",
            "partitions": f"the input topic's partitions x{self.value}",
            "burst": f"a burst of {self.value:,} lines, with an HPA on the app",
        }[self.kind]


def parse_step(text: str) -> Step:
    kind, _, value = text.strip().partition("=")
    if kind not in KINDS:
        raise StepError(f"step {text!r}: the kind must be one of {', '.join(KINDS)}")
    if kind == "kill":
        if value:
            raise StepError(f"step {text!r}: kill takes no value")
        return Step(kind)
    try:
        number = int(value)
    except ValueError:
        raise StepError(f"step {text!r}: {kind} needs a whole number, as {kind}=3") from None
    if number < 1 or (kind == "partitions" and number < 2):
        raise StepError(
            f"step {text!r}: {kind} must be at least {2 if kind == 'partitions' else 1}"
        )
    return Step(kind, number)


def parse_script(texts: list[str] | tuple[str, ...]) -> list[Step]:
    return [parse_step(t) for t in texts]


def random_script(seed: int, count: int, max_replicas: int = 6) -> list[Step]:
    """``count`` steps drawn from ``seed``: mostly scale events, some pod kills (what a
    soak run plays; the same seed gives the same script)."""
    rng = random.Random(seed)
    steps = []
    for _ in range(count):
        if rng.random() < 0.25:
            steps.append(Step("kill"))
        else:
            steps.append(Step("scale", rng.randint(1, max_replicas)))
    return steps


class Stage(Protocol):
    """What a script acts on: the running app, and how to wait for it."""

    replicas: int

    def scale(self, replicas: int) -> None: ...
    def kill_pod(self) -> str: ...
    def add_partitions(self, factor: int) -> int: ...
    def burst(self, records: int) -> int: ...
    def settle(self, replicas: int) -> float: ...


def run_step(stage: Stage, step: Step) -> str:
    """Do one step and wait until it settles; what happened, for people."""
    began = time.monotonic()
    if step.kind == "scale":
        stage.scale(step.value)
        stage.settle(step.value)
        what = f"scaled to {step.value}"
    elif step.kind == "kill":
        pod = stage.kill_pod()
        stage.settle(stage.replicas)
        what = f"killed {pod}"
    elif step.kind == "partitions":
        count = stage.add_partitions(step.value)
        stage.settle(stage.replicas)
        what = f"input grown to {count} partitions"
    else:
        replicas = stage.burst(step.value)
        what = f"burst: the HPA took it to {replicas}"
    return f"{what}, settled in {time.monotonic() - began:.1f}s"


def run_script(stage: Stage, steps: list[Step], say: Callable[[str], None]) -> None:
    for i, step in enumerate(steps, 1):
        say(f"step {i}/{len(steps)}: {step.describe()}")
        say(f"step {i}/{len(steps)}: {run_step(stage, step)}")
