"""Faults on a replicated cluster (issue 26): three KRaft brokers, every topic with
replication factor 3 and ``min.insync.replicas`` 2 (the ``three_brokers`` fixture,
docs/local-stack.md).

WordCount runs on 2 pods under the operator with steady input and a scale to 4 in
flight (learners restoring, paced so they still are), as in test_restart.py; then:

- ``rolling``: every broker restarted one at a time with its controlled shutdown, each
  back in every partition's ISR before the next goes, as an upgrade does it;
- ``leader-crash``: the broker leading most of the app's source and changelog
  partitions SIGKILLed, started again on its data ``CRASH_DOWNTIME`` s later.

The suite's four checks follow: the scale completes (balanced at 4), every task commits
again within ``RESUME_BOUND`` of the fault's end, every count is exact, and no task ever
had two owners. Worker restarts are counted and printed, not yet held to 0.

(One broker gone for good is not here yet: docs/reliability.md, "Three brokers".)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from segue.stack import KafkaCluster
from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_for

from .harness import NAME, FaultRun, Outage, outage, scaling_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
CRASH_DOWNTIME = 10.0


def in_sync(cluster: KafkaCluster) -> bool:
    """Every partition of every topic has all its replicas in sync."""
    metadata = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(timeout=10)
    return all(
        sorted(p.isrs) == sorted(p.replicas) and p.leader >= 0
        for t in metadata.topics.values()
        for p in t.partitions.values()
    )


def rolling_restart(cluster: KafkaCluster, run: FaultRun) -> list[Outage]:
    """Each broker in turn: controlled shutdown, started on its data, then back in every
    ISR before the next one stops."""
    done = []
    for node in cluster.nodes:
        done.append(outage(node.stop, node.start, 0.0))
        wait_for(f"broker {node.node_id} back in every ISR", lambda: in_sync(cluster), 120, run.why)
    return done


def changelogs(name: str, run: FaultRun) -> tuple[str, ...]:
    """``name`` if it is one of the app's internal topics (changelog, repartition)."""
    return (name,) if name.startswith(f"{run.app_id}-") else ()


def restarts(apps: Apps) -> dict[str, int]:
    """Each pod's container restarts: a worker that exited (worker/watchdog.py)."""
    return {
        name: sum(c.restart_count or 0 for c in pod.status.container_statuses or [])
        for name, pod in apps.pods(NAME).items()
    }


def busiest_leader(cluster: KafkaCluster, run: FaultRun) -> int:
    """The broker leading most of the app's input and changelog partitions."""
    metadata = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(timeout=10)
    mine = [
        t for name, t in metadata.topics.items() if name in (run.source, *changelogs(name, run))
    ]
    leaders = Counter(p.leader for t in mine for p in t.partitions.values())
    return leaders.most_common(1)[0][0]


@pytest.mark.parametrize("fault", ["rolling", "leader-crash"])
def test_three_brokers_fault_mid_scale_up(  # noqa: PLR0917 (fixtures)
    fault: str,
    kube: Any,
    three_brokers: KafkaCluster,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    cluster = three_brokers
    run = scaling_up(cluster, apps, operator, pod_runner, to=4)
    try:
        if fault == "rolling":
            outages = rolling_restart(cluster, run)
            pairs = zip(cluster.nodes, outages, strict=True)
            what = "; ".join(f"broker {n.node_id}: {o}" for n, o in pairs)
        else:
            node = cluster.node(busiest_leader(cluster, run))
            outages = [outage(node.crash, node.start, CRASH_DOWNTIME)]
            what = f"broker {node.node_id} (the app's busiest leader) SIGKILLed: {outages[0]}"
        resumed = run.resumed(outages[-1].ended)
        balanced = run.balanced(4, timeout=240)
        exits = restarts(apps)
    finally:
        run.stop()
    print(
        f"\n{fault} on three brokers mid-scale: {what}; every task committing again "
        f"{resumed:.1f}s after; balanced at 4 {balanced:.1f}s later; worker restarts "
        f"{exits}; {run.measured()}"
    )
    run.finish()
    # Not asserted yet: a worker whose Kafka call hangs past its bound across the restart
    # still exits for its supervisor to restart it (worker/watchdog.py; issue 26 wants it
    # recovered in the process). Printed above and in docs/reliability.md.
