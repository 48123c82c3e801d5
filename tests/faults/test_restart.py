"""Faults: the Kafka broker, or the kube-apiserver, restarts mid-scale under input
(issue 14).

WordCount runs on 2 pods under the operator with steady input; a scale to 4 is in
flight (learners restoring, paced so they still are) when one shared component of
the session is stopped, kept down ``DOWNTIME`` s and started again on its own data:

- ``broker``: Kafka (SIGTERM, a controlled shutdown), on the same data and ports, so
  every client reconnects; the handover in flight meets a broker that is gone;
- ``apiserver``: the kube-apiserver (SIGTERM, SIGKILL after 3 s), on the same etcd.
  The workers keep running their last generation (they need the API only to read
  it); the operator, the pod runner and the controller-manager lose their watches.

Afterwards: the scale completes (balanced at 4), every task commits again within
``RESUME_BOUND`` of the component serving, every count is exact, and no task ever
had two owners. ``outage`` starts the component again whatever happens, so the
tests after this one keep it.

The broker case is marked xfail (not strict) for one open bug (docs/reliability.md,
"Still open"): a worker restarted around the broker's restart may wait for good on
its tasks' committed input offsets (a KIP-447 stable fetch the group coordinator
leaves unanswered), so those tasks do not start and the test fails on the 15 s (3
runs in 5 when it was found). A plain fetch removed the wait but counted records
twice in a worker test, so it was taken back. XPASS otherwise; docs/reliability.md
records the numbers (``pytest -s``).
"""

from __future__ import annotations

from typing import Any

import pytest

from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess

from .harness import outage, scaling_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
DOWNTIME = 5.0
OPEN_BROKER_BUG = (
    "open: a worker restarted around the broker's restart may wait for good on its "
    "committed offsets (a stable fetch left unanswered), so its tasks do not start "
    "(docs/reliability.md)"
)


@pytest.mark.parametrize(
    "component",
    [
        pytest.param("broker", marks=pytest.mark.xfail(reason=OPEN_BROKER_BUG, strict=False)),
        "apiserver",
    ],
)
def test_restart_mid_scale_up(  # noqa: PLR0917 (fixtures)
    component: str, kube: Any, kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    stop, start = {
        "broker": (kafka.stop, kafka.start),
        "apiserver": (kube.stop_apiserver, kube.start_apiserver),
    }[component]
    run = scaling_up(kafka, apps, operator, pod_runner, to=4)
    try:
        down = outage(stop, start, DOWNTIME)
        resumed = run.resumed(down.ended)
        balanced = run.balanced(4, timeout=240)
    finally:
        run.stop()
    print(
        f"\n{component} restart mid-scale: {down}; every task committing again "
        f"{resumed:.1f}s after it served; balanced at 4 {balanced:.1f}s later; "
        f"{run.measured()}"
    )
    run.finish()
