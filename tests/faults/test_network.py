"""Fault: the network between one worker pod and the broker degrades, then fails
(issue 26): 300 ms of latency, then a 10 s cut.

A real TCP proxy, Toxiproxy, sits in the path of one worker and no other: the broker
is the test's own with a ``PROXIED`` listener advertised at the proxy's address
(``segue.stack.kafka_proxied``), and the pod runner gives pod ``wc-1`` the proxy's
address as its bootstrap servers (``PodRunner.env_overrides``: pods here share the
machine's network, so the route is what differs). The metadata then keeps every
connection of that worker behind the proxy; ``wc-0``, the operator, the input and the
watchers reach the broker directly. The test checks the route before the fault.

WordCount runs on 2 pods under input; then for ``LATENCY_FOR`` s every response to
``wc-1`` is held 300 ms (a ``latency`` toxic), then for ``CUT_FOR`` s nothing passes
either way (``timeout`` toxics with timeout 0: bytes dropped, no connection closed, as
a partition does it; at the heal the proxy's connections are reset, since bytes a
real network would have retransmitted are gone from those streams). Afterwards the
suite's four checks: every task committing again within ``RESUME_BOUND`` of the heal,
balanced at 2, exact, never two owners. And under latency alone no task stood still
for ``2 * STEADY_GAP``; the status named the cut (``Degraded`` ``True`` naming
``wc-1``: ``TransactionAborted`` for its tasks) and said nothing of ``wc-0``;
``Degraded`` cleared afterwards; and no worker exited (a commit stuck in the cut is
abandoned and its task fenced anew in the process: worker/committing.py). Everything the
status said from the cut on is printed (docs/reliability.md, "A network fault").
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.protocol.names import ENV_BOOTSTRAP_SERVERS
from segue.stack.apps import Apps
from segue.stack.kafka_proxied import ProxiedKafkaBroker
from segue.stack.paths import Binaries
from segue.stack.toxiproxy import Proxy
from tests.operator.e2e import OperatorProcess, wait_for

from .harness import NAME, container_pid, restarts, start
from .network import StatusLog, proxied_broker, remote_ports, window_stall
from .progress import STEADY_GAP

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
PROXIED_POD = f"{NAME}-1"
LATENCY_MS = 300
LATENCY_FOR = 20.0
CUT_FOR = 10.0


@pytest.fixture
def proxied(tmp_path: Path, binaries: Binaries) -> Iterator[tuple[ProxiedKafkaBroker, Proxy]]:
    with proxied_broker(tmp_path, binaries) as both:
        yield both


def degraded(apps: Apps) -> bool:
    condition = apps.condition(NAME, "Degraded")
    return condition is not None and condition.status == "True"


def test_latency_then_a_cut_between_one_worker_and_kafka(
    proxied: tuple[ProxiedKafkaBroker, Proxy],
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    broker, proxy = proxied
    route = (apps.namespace, PROXIED_POD)
    pod_runner.env_overrides[route] = {ENV_BOOTSTRAP_SERVERS: broker.proxied_bootstrap}
    try:
        run = start(broker, apps, operator, pod_runner, replicas=2, lines=3000, rate=100)
    except BaseException:
        pod_runner.env_overrides.pop(route, None)  # the runner is the session's
        raise
    log = StatusLog(apps, NAME)
    try:
        proxied_ports = remote_ports(container_pid(apps, PROXIED_POD))
        direct_ports = remote_ports(container_pid(apps, f"{NAME}-0"))
        assert broker.proxy_port in proxied_ports, f"{PROXIED_POD}: {proxied_ports}"
        assert broker.port not in proxied_ports, f"{PROXIED_POD} reaches the broker directly"
        assert broker.proxy_port not in direct_ports, f"{NAME}-0 goes through the proxy"
        before = restarts(apps)
        log.start()

        slow_at = time.monotonic()
        proxy.add("latency", "latency", latency=LATENCY_MS)
        time.sleep(LATENCY_FOR)
        cut_at = time.monotonic()
        slow_stall = window_stall(run.progress.advances(), slow_at, cut_at)
        for stream in ("upstream", "downstream"):
            proxy.add(f"cut-{stream}", "timeout", stream, timeout=0)
        time.sleep(CUT_FOR)
        proxy.clear()
        proxy.reset()
        healed = time.monotonic()
        resumed = run.resumed(healed)
        balanced = run.balanced(2, timeout=120)
        cleared = wait_for("Degraded cleared", lambda: not degraded(apps), 60, run.why)
    finally:
        log.halt.set()
        pod_runner.env_overrides.pop(route, None)
        run.stop()
    said = log.since(cut_at)
    exited = {p: n - before.get(p, 0) for p, n in restarts(apps).items()}
    print(
        f"\nnetwork fault on {PROXIED_POD}: {LATENCY_MS} ms latency for {LATENCY_FOR:.0f}s "
        f"(longest stall of a task meanwhile {slow_stall:.1f}s), then cut {CUT_FOR:.0f}s; "
        f"every task committing again {resumed:.1f}s after the heal; balanced at 2 "
        f"{balanced:.1f}s later, Degraded cleared {cleared:.1f}s after that; worker "
        f"restarts {exited}; {run.measured()}\n"
        "the status from the cut on:\n"
        + "\n".join(f"  +{t:5.1f}s {text[:240]}" for t, text in said)
    )
    run.finish()
    # Latency alone is no outage: every task kept committing (measured: 2.0 to 2.3 s).
    assert slow_stall < 2 * STEADY_GAP, f"a task stood still {slow_stall:.1f}s under latency"
    # The cut is named, on the member cut off, and on no other.
    named = [text for t, text in said if t < CUT_FOR + resumed and text.startswith("Degraded=True")]
    assert any(PROXIED_POD in text for text in named), "no Degraded condition named the cut"
    assert not any(text.startswith(f"{NAME}-0 ") for _, text in said), f"{NAME}-0 hurt too"
    # Recovered in the process: a stuck commit is abandoned, not exited for.
    assert not any(exited.values()), f"workers exited across the cut: {exited}"
