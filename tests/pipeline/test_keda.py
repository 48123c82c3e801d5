"""The KEDA baseline follows records lag, up at once and down after its window."""

from __future__ import annotations

import pytest

from segue.pipeline.policies.keda import KedaController
from segue.pipeline.scenario import LoadStep, Scenario, SubTopology
from segue.pipeline.simulate import simulate
from segue.protocol.history import HistoryRecord

from .scenarios import looks


def burst() -> Scenario:
    """One pod processes 1,000 records/s; 8 partitions get 500/s each for 5 minutes."""
    return Scenario(
        name="burst",
        app="wc",
        replicas=1,
        duration=1200,
        pod_rate=1_000,
        startup_delay=10,
        subtopologies=[SubTopology(id=0, partitions=8)],
        load=[LoadStep(at=0, rate=50), LoadStep(at=60, rate=500), LoadStep(at=360, rate=50)],
    )


def test_keda_scales_out_on_lag_and_back_after_the_window() -> None:
    rows: list[HistoryRecord] = []
    out = simulate(burst(), KedaController(lag_threshold=1_000), record=rows.append)
    replicas = [r.spec_replicas for r in rows]
    assert replicas[0] == 1
    assert max(replicas) == 8  # capped at the partition count (allowIdleConsumers: false)
    peak = replicas.index(max(replicas))
    assert 60 < peak < 360
    assert replicas[-1] == 1
    down = next(i for i in range(peak, len(replicas)) if replicas[i] < max(replicas))
    # the lag drains long before the load drops, yet the HPA holds the peak for its window
    assert down - peak >= 300 - 30
    assert out.records_processed_late > 0
    assert out.generations_published >= 2


def test_keda_stays_put_without_lag() -> None:
    quiet = burst().model_copy(update={"load": [LoadStep(at=0, rate=50)]})
    rows: list[HistoryRecord] = []
    out = simulate(quiet, KedaController(), record=rows.append)
    assert {r.spec_replicas for r in rows} == {1}
    assert out.generations_published == 0


def test_keda_leaps_over_polls_that_set_nothing_new() -> None:
    """Its polls in a steady stretch (no backlog moving) are recorded, not stepped, and
    the window still ends where polling every 30 s would end it."""
    steps, outcomes = {}, {}
    for fast in (True, False):
        steps[fast], outcomes[fast] = looks(
            burst(), lambda: KedaController(lag_threshold=1_000), fast=fast
        )
    fast, slow = outcomes[True], outcomes[False]
    differ = {
        k: (fast[k], slow[k])
        for k in slow
        if not (
            fast[k] == pytest.approx(slow[k]) if isinstance(slow[k], float) else fast[k] == slow[k]
        )
    }
    assert not differ
    assert steps[False] == 1200
    assert steps[True] < 1200 / 30, steps  # fewer looks than its 40 polls (54 before)
