"""The signal's maths on literal samples: lag, counter resets, windows, catch-up."""

from __future__ import annotations

import math

import pytest

from segue.operator.autoscale import (
    AppSignal,
    Sample,
    Window,
    catch_up,
    compute,
    counter_increase,
    rates,
    remember,
)

P0, P1 = ("in", 0), ("in", 1)


def sample(t: float, ends: tuple[int, int], done: tuple[int, int], **processed: int) -> Sample:
    return Sample(
        time=t,
        log_end={P0: ends[0], P1: ends[1]},
        committed={P0: done[0], P1: done[1]},
        processed=processed,
        active=len(processed),
        tasks=12,
    )


def test_lag_sums_partitions_and_never_goes_negative() -> None:
    assert sample(0, (100, 50), (90, 60)).lag == 10


def test_counter_reset_is_not_negative_throughput() -> None:
    assert counter_increase(500, 700) == 200
    assert counter_increase(500, 30) == 30  # a restarted pod: 0, then 30


def test_a_restarted_member_keeps_the_processing_rate_positive() -> None:
    window = (
        sample(0, (0, 0), (0, 0), a=1000, b=1000),
        sample(10, (500, 500), (500, 500), a=1500, b=20),  # b restarted: 0, then 20
    )
    r = rates(window)
    assert r.input_rate == pytest.approx(100.0)
    assert r.processing_rate == pytest.approx(52.0)  # 500 + 20 over 10 s


def test_a_new_member_is_a_baseline_not_work() -> None:
    window = (sample(0, (0, 0), (0, 0), a=10), sample(5, (0, 0), (0, 0), a=10, b=9_999))
    assert rates(window).processing_rate == 0.0


def test_window_keeps_at_least_its_span_and_resets_when_time_goes_back() -> None:
    window = Window()
    for t in range(0, 40, 2):
        window = remember(window, sample(t, (0, 0), (0, 0)), seconds=15)
    assert window.span >= 15
    assert window.ready
    assert window.samples[1].time > 38 - 15
    back = remember(window, sample(1, (0, 0), (0, 0)))
    assert back.samples == (sample(1, (0, 0), (0, 0)),)
    assert not back.ready


def test_no_rate_spans_a_look_that_could_not_read_kafka() -> None:
    """400 records/s, then 30 s in which Kafka could not be read (the producer stalled
    too), then the looks after it: paired with the last one before, the first reads as a
    trickle of input and an HPA would scale down on it. The next rate waits for a whole
    window, over which the producer's catch-up is averaged out."""
    window = Window()
    for t in range(0, 16):
        window = remember(window, sample(t, (200 * t, 200 * t), (200 * t, 200 * t), a=0))
    assert window.ready
    assert rates(window.samples).input_rate == pytest.approx(400)
    after = sample(46, (3200, 3200), (3200, 3200), a=0)  # the producer not caught up yet
    assert rates(remember(window, after).samples).input_rate < 100  # the hazard, were it kept
    window = remember(window, None)
    assert window == Window((), regaining=True)
    assert not window.ready
    # the producer reconnects, catches up (a burst), then writes 400/s again
    for t, end in (
        (46, 3200),
        (47, 3400),
        (48, 9400),
        *((t, 9400 + 200 * (t - 48)) for t in range(49, 62)),
    ):
        window = remember(window, sample(t, (end, end), (end, end), a=0))
        assert window.ready == (t - 46 >= 15), t
    assert window.span == 15
    assert rates(window.samples).input_rate == pytest.approx(
        2 * (12000 - 3200) / 15
    )  # both partitions, the burst in
    assert not remember(window, None).ready


def test_capacity_is_measured_only_while_behind_and_per_active_member() -> None:
    behind = (
        sample(0, (10_000, 10_000), (0, 0), a=0, b=0),
        sample(10, (11_000, 11_000), (1_500, 1_500), a=1_500, b=1_500),
    )
    assert rates(behind).capacity == pytest.approx(150.0)
    keeping_up = (
        sample(0, (0, 0), (0, 0), a=0, b=0),
        sample(10, (1_000, 1_000), (995, 995), a=995, b=995),
    )
    assert rates(keeping_up).capacity is None


def test_catch_up_seconds() -> None:
    assert catch_up(0, 100, 50) == 0.0
    assert catch_up(10_000, 150, 100) == pytest.approx(200.0)
    assert catch_up(10_000, 100, 100) == math.inf
    assert catch_up(10_000, 0, 0) == math.inf
    assert catch_up(40, 100, 100) == pytest.approx(0.4)  # within a second: a pipeline


def test_compute_behind_with_a_scale_in_flight() -> None:
    """Two active members at 150/s each, input 200/s, 4 replicas asked for: today's
    capacity catches up in lag/(300-200); once the learners land, in lag/(600-200)."""
    window = (
        sample(0, (20_000, 20_000), (10_000, 10_000), a=0, b=0),
        sample(10, (21_000, 21_000), (11_500, 11_500), a=1_500, b=1_500),
    )
    s = compute("ns", "app", 4, window, catch_up_seconds=100)
    assert s.lag_records == 19_000
    assert s.input_rate == pytest.approx(200.0)
    assert s.processing_rate == pytest.approx(300.0)
    assert s.seconds_to_catch_up == pytest.approx(190.0)
    assert s.projected_seconds_to_catch_up == pytest.approx(19_000 / 400)
    assert s.capacity_per_member == pytest.approx(150.0)
    assert s.replicas_needed == pytest.approx((200 + 190) / 150)
    assert s.active_members == 2


def test_compute_keeping_up_holds_and_remembers_capacity() -> None:
    window = (
        sample(0, (0, 0), (0, 0), a=0, b=0),
        sample(10, (1_000, 1_000), (995, 995), a=995, b=995),
    )
    fresh = compute("ns", "app", 2, window)
    assert fresh.replicas_needed == pytest.approx(2.0, rel=0.02)  # capacity unknown: ~n
    known = AppSignal("ns", "app", 0, 2, 0, 0, 0, 0, 0, capacity_per_member=500.0)
    remembered = compute("ns", "app", 2, window, previous=known)
    assert remembered.capacity_per_member == 500.0
    assert remembered.replicas_needed == pytest.approx(200 / 500, rel=0.02)
    assert remembered.seconds_to_catch_up < 1.0


def test_nothing_processed_means_hold() -> None:
    window = (sample(0, (100, 100), (0, 0), a=0), sample(10, (200, 200), (0, 0), a=0))
    s = compute("ns", "app", 3, window)
    assert s.replicas_needed == 3.0
    assert s.seconds_to_catch_up == math.inf
    assert s.capacity_per_member == 0.0


def test_replicas_needed_is_capped_at_the_input_task_count() -> None:
    window = (
        sample(0, (20_000, 20_000), (10_000, 10_000), a=0),
        sample(10, (30_000, 30_000), (10_500, 10_500), a=1_000),
    )
    capped = compute("ns", "app", 1, (window[0], Sample(**{**window[1].__dict__, "tasks": 2})))
    assert capped.replicas_needed == 2.0
    assert compute("ns", "app", 1, window).replicas_needed > 2.0
