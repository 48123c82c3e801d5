"""Small hand-made scenarios the pipeline tests share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from segue.pipeline.policies.base import Controller
from segue.pipeline.scenario import LoadStep, ScaleTo, Scenario, ScenarioEvent, SubTopology
from segue.pipeline.simulate import simulate

S = 100_000_000  # bytes of state per task: 100,000 changelog records of 1,000 bytes


def scale_out(
    replicas: int = 2, to: int = 4, partitions: int = 8, duration: float = 300.0
) -> Scenario:
    """``partitions`` stateful tasks of S bytes each, restored at 20,000 records/s."""
    events: list[ScenarioEvent] = [ScaleTo(at=10, replicas=to)]
    return Scenario(
        name=f"scale-{replicas}-{to}",
        app="wc",
        replicas=replicas,
        duration=duration,
        startup_delay=20,
        subtopologies=[
            SubTopology(
                id=0, partitions=partitions, state_bytes=[S] * partitions, record_bytes=1_000
            )
        ],
        load=[LoadStep(at=0, rate=100)],
        events=events,
    )


def history_lines(duration: float = 60.0) -> list[str]:
    """The HistoryRecord rows the simulator emits for a scale-out (eager), as JSON lines."""
    from segue.pipeline.policies.eager import EagerController
    from segue.protocol.history import HistoryRecord

    rows: list[HistoryRecord] = []
    simulate(scale_out(duration=duration), EagerController(), record=rows.append)
    return [r.model_dump_json() for r in rows]


def looks(
    scenario: Scenario, controller: Callable[[], Controller], *, fast: bool
) -> tuple[int, dict[str, Any]]:
    """How many times the simulator asks a fresh policy to ``step``, and the outcome."""
    policy = controller()
    step = policy.step
    calls = 0

    def counted(c: Any, now: float) -> None:
        nonlocal calls
        calls += 1
        step(c, now)

    policy.step = counted  # type: ignore[method-assign]
    outcome = asdict(simulate(scenario, policy, fast=fast))
    return calls, outcome
