"""The fleet benchmark's arithmetic (bench/fleet/stats.py)."""

from __future__ import annotations

import math

import pytest

from bench.fleet.stats import cpu_percent, percentile, rate


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 1..100, unsorted
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile(values, 0) == 1
    assert percentile([3.0], 99) == 3.0
    assert percentile([1.0, 2.0], 50) == 1.0
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError, match="within"):
        percentile([1.0], 101)


def test_one_slow_sample_in_a_hundred_is_the_p99() -> None:
    assert percentile([0.1] * 98 + [5.0, 9.0], 99) == 5.0


def test_cpu_and_rate() -> None:
    assert cpu_percent(1000, 1500, 10.0, 100) == 50.0  # half a core
    assert rate(10, 110, 4.0) == 25.0
    with pytest.raises(ValueError, match="longer"):
        rate(0, 1, 0)
