"""The autoscaling signal end to end: WordCount under steady input with the operator on
the real stack. The operator's page carries the segue_app_* gauges with sane values:
lag never negative, the input rate within 30 % of the producer's after the window
fills, a positive processing rate; once input stops the lag falls to 0 and so do the
seconds to catch up."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from segue.operator.autoscale import WINDOW_SECONDS
from segue.stack.apps import Apps, text_input

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import diagnose, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]
RATE = 200.0


def test_the_signal_follows_steady_input_and_falls_to_zero_when_it_stops(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, _ = wordcount(kafka, "wc", 2)
    apps.create(body)
    why = diagnose(apps, "wc", operator, pod_runner)
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    producer = text_input(kafka.bootstrap_servers, source, words=60, rate=RATE)
    began = time.time()  # the clock of the operator's sample times
    producer.start()
    seen: list[dict[str, float]] = []

    def steady() -> bool:
        g = operator.samples("wc")
        seen.append(g)
        return (
            bool(g)
            and abs(g["segue_app_input_records_per_second"] - RATE) <= 0.3 * RATE
            and g["segue_app_processed_records_per_second"] > 0
        )

    try:
        wait_for("the input rate measured", steady, 90, lambda: f"{seen[-3:]}\n{why()}")

        def steady_only() -> bool:
            """The window holds steady input only: it starts at the newest sample at or
            before its newest minus WINDOW_SECONDS, so at or after any sample seen there,
            and one seen there was taken after the first record."""
            g = operator.samples("wc")
            seen.append(g)
            start = g["segue_app_signal_timestamp_seconds"] - WINDOW_SECONDS
            taken = (s.get("segue_app_signal_timestamp_seconds", 0.0) for s in seen)
            return any(began <= t <= start for t in taken)

        wait_for("a window of steady input only", steady_only, 60, lambda: f"{seen[-3:]}\n{why()}")
        for _ in range(8):  # it stays sane under steady input, not just once
            g = operator.samples("wc")
            assert g["segue_app_input_lag_records"] >= 0
            assert abs(g["segue_app_input_records_per_second"] - RATE) <= 0.3 * RATE, g
            assert abs(g["segue_app_processed_records_per_second"] - RATE) <= 0.3 * RATE, g
            assert g["segue_app_active_members"] == 2
            # WordCount keeps up with 200/s: far under a second behind, no scale-up asked
            assert g["segue_app_seconds_to_catch_up"] < 1.0, g
            assert 1.0 <= g["segue_app_replicas_needed"] <= 2.2, g
            time.sleep(1)
            seen.append(g)
    finally:
        producer.stop()

    def drained() -> bool:
        g = operator.samples("wc")
        seen.append(g)
        return g["segue_app_input_lag_records"] == 0 and g["segue_app_seconds_to_catch_up"] == 0

    wait_for("lag and catch-up at 0", drained, 60, lambda: f"{seen[-3:]}\n{why()}")
    final = seen[-1]
    assert math.isfinite(final["segue_app_projected_seconds_to_catch_up"])
    assert final["segue_app_signal_timestamp_seconds"] > 0
    print(f"signal under {RATE:.0f}/s: {seen[-10]}; drained: {final}")
