"""The soak's script and tally (bench/soak/plan.py): pure, so checked here without a stack."""

from __future__ import annotations

from bench.soak.plan import lost_and_duplicated, percentile, schedule


def test_the_seed_decides_the_events_and_the_last_interval_stays_quiet() -> None:
    one = schedule(seed=7, minutes=30, every=60, replicas=2, max_replicas=6)
    assert one == schedule(seed=7, minutes=30, every=60, replicas=2, max_replicas=6)
    assert one != schedule(seed=8, minutes=30, every=60, replicas=2, max_replicas=6)
    assert 20 <= len(one) <= 35
    assert all(e.at < 30 * 60 - 60 for e in one)
    assert {e.kind for e in one} == {"scale", "kill", "broker"}
    replicas = 2
    for e in one:
        if e.kind == "scale":  # every scale changes the count and stays in range
            assert e.arg != replicas
            assert 1 <= e.arg <= 6
            replicas = e.arg


def test_lost_and_duplicated_records_are_counted_per_key() -> None:
    sent = {"k1": 3, "k2": 2, "k3": 1}
    counts = {"k1": [1, 2, 2, 3], "k2": [1], "k4": [1]}
    # k1: 2 counted twice; k2: its 2nd lost; k3: its only record lost; k4: never sent
    assert lost_and_duplicated(counts, sent) == (2, 2)
    assert lost_and_duplicated({"k1": [1, 2, 3], "k2": [1, 2], "k3": [1]}, sent) == (0, 0)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 99) == 0.0
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0
