"""Faults: the Kafka broker, or the kube-apiserver, restarts mid-scale under input
(issue 14).

WordCount runs on 2 pods under the operator with steady input; a scale to 4 is in
flight (learners restoring, paced so they still are) when one shared component of
the session is stopped, kept down ``DOWNTIME`` s and started again on its own data:

- ``broker-crash``: Kafka SIGKILLed (a crash), started on the same data and ports,
  so every client reconnects; the handover in flight meets a broker that is gone;
- ``broker``: the same with SIGTERM, Kafka's controlled shutdown;
- ``apiserver``: the kube-apiserver (SIGTERM, SIGKILL after 3 s), on the same etcd.
  The workers keep running their last generation (they need the API only to read
  it); the operator, the pod runner and the controller-manager lose their watches.

Afterwards: the scale completes (balanced at 4), every task commits again within
``RESUME_BOUND`` of the component serving, every count is exact, and no task ever
had two owners. ``outage`` starts the component again whatever happens, so the
tests after this one keep it.

The controlled shutdown of the only broker can leave a transaction hanging, a Kafka
bug (docs/reliability.md, "A transaction committed while the only broker stops"):
a transaction that commits in the shutdown's first moments is recorded complete
with no marker written, and every read_committed reader of its partitions waits for
good. A crash has left one too (``__consumer_offsets``, a full-suite run of 2026-11-27). No
client can hold a last stable offset that long: the coordinator aborts a transaction
open past its timeout (the workers' 10 s) within its 10 s check. So
``lso.LsoWatch`` samples every partition's ends from the restart on; when the resume
check fails and an LSO was held below the high watermark for over 25 s, the test is
marked xfail naming the partitions; any other failure fails it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess

from .harness import outage, scaling_up
from .lso import HELD, LsoWatch

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
DOWNTIME = 5.0


@pytest.mark.parametrize("component", ["broker-crash", "broker", "apiserver"])
def test_restart_mid_scale_up(  # noqa: PLR0917 (fixtures)
    component: str, kube: Any, kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    stop, start = {
        "broker-crash": (kafka.crash, kafka.start),
        "broker": (kafka.stop, kafka.start),
        "apiserver": (kube.stop_apiserver, kube.start_apiserver),
    }[component]
    run = scaling_up(kafka, apps, operator, pod_runner, to=4)
    watch = LsoWatch(kafka.bootstrap_servers)
    try:
        down = outage(stop, start, DOWNTIME)
        watch.start()
        try:
            resumed = run.resumed(down.ended)
        except AssertionError as late:
            if component == "apiserver":
                raise
            time.sleep(max(0.0, down.ended + HELD + 5 - time.monotonic()))
            hanging = watch.held()
            if hanging:
                pytest.xfail(
                    f"Kafka left a transaction hanging across the only broker's "
                    f"{'crash' if component == 'broker-crash' else 'controlled shutdown'} "
                    f"(docs/reliability.md): last stable offsets held at {hanging}"
                )
            raise AssertionError(f"{late}\nlast stable offsets held: none") from late
        balanced = run.balanced(4, timeout=240)
    finally:
        watch.halt.set()
        run.stop()
    print(
        f"\n{component} restart mid-scale: {down}; every task committing again "
        f"{resumed:.1f}s after it served; balanced at 4 {balanced:.1f}s later; "
        f"{run.measured()}"
    )
    run.finish()
