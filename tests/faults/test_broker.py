"""Fault: the Kafka broker restarts mid-handover (issue 14).

WordCount runs on 2 pods under the operator with steady input; a scale to 4 is in
flight (learners restoring, paced so they are still at it) when the broker is
stopped, kept down ``DOWNTIME`` s and started again on the same data. Afterwards:
every count exact, the app balanced at 4, every task committing again within
``RESUME_BOUND`` of the broker serving, and never two pods running one task.

It restarts the session's broker (same ports and data, so every client reconnects);
the ``finally`` starts it again whatever happens, so the tests after this one keep
their broker. docs/reliability.md records the numbers (``pytest -s`` prints them).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.operator.e2e import Apps, OperatorProcess, wait_for

from .harness import NAME, start

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
DOWNTIME = 5.0


def test_broker_restart_mid_handover(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    run = start(
        kafka, apps, operator, pod_runner, replicas=2, lines=6000, rate=100,
        env={"SEGUE_STANDBY_RESTORE_RATE": "300"},  # learners still restoring at the stop
    )  # fmt: skip
    try:
        apps.scale(NAME, 4)
        wait_for("learners in flight", lambda: apps.learning(NAME), 60, run.why)
        began = time.monotonic()
        try:
            kafka.stop()
            stopped = time.monotonic() - began
            time.sleep(DOWNTIME)
        finally:
            kafka.start()
        serving = time.monotonic()
        resumed = run.resumed(serving)
        balanced = run.balanced(4, timeout=240)
    finally:
        run.stop()
    stall, where = run.progress.longest_stall()
    print(
        f"\nbroker restart mid-handover: stop {stopped:.1f}s, down {DOWNTIME:.0f}s, "
        f"start {serving - began - stopped - DOWNTIME:.1f}s; every task committing again "
        f"{resumed:.1f}s after the broker served; balanced at 4 {balanced:.1f}s later; "
        f"longest stall {stall:.1f}s ({where}); {sum(run.sent.values())} lines; "
        f"owner overlaps: {run.owners.summary()}"
    )
    run.finish()
