"""A Kafka Streams app scaled down with Kafka's default session timeout (45 s): a pod
Segue removes leaves the group as it closes (the client supplier's ``Leaving``), so no
rebalance waits out the gone member's session and no input partition stops committing.
Kafka Streams alone closes without leaving the group, and the members were seen to commit
nothing for 44.7 s right after a 5 -> 3 (docs/kafka-streams.md, "A pod that goes away")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from segue.stack.apps import Apps, text_input
from tests.faults.progress import Progress
from tests.worker.harness import read_committed

from .e2e import OperatorProcess, wait_for
from .test_e2e_kstreams import built, exact_string_counts, ks_operator, wordcount
from .test_e2e_scaling import diagnose, merge, prefill

pytestmark = [pytest.mark.e2e, pytest.mark.kstreams, pytest.mark.timeout(600)]
__all__ = ["built", "ks_operator"]  # the fixtures this module's test takes
GAP_BOUND = 2.0  # seconds an input partition may commit nothing across a scale-down
AFTER = 10.0  # seconds watched once balanced: the wait for a gone member came after it


def test_a_scale_down_with_the_default_session_timeout_stops_no_input_partition(  # noqa: PLR0917 (fixtures)
    kafka: Any,
    apps: Apps,
    ks_operator: OperatorProcess,
    pod_runner: Any,
    tmp_path: Path,
    built: tuple[Path, str],
) -> None:
    body, source, output = wordcount(kafka, tmp_path, built[1], replicas=3, session_timeout_ms=None)
    app_id = body["spec"]["applicationId"]
    apps.create(body)
    why = diagnose(apps, "kwc", ks_operator, pod_runner)
    wait_for("3 pods balanced", lambda: apps.balanced("kwc", 3), 300, why)
    before = prefill(kafka, source, 3000)
    producer = text_input(kafka.bootstrap_servers, source, 60, 100)
    producer.start()
    progress = Progress(kafka.bootstrap_servers, app_id, [source, f"{app_id}-counts-repartition"])
    progress.start()
    try:
        wait_for("every task committing", progress.all_moving, 120, why)
        asked = time.monotonic()
        apps.scale("kwc", 2)
        took = wait_for("2 pods balanced", lambda: apps.balanced("kwc", 2), 180, why)
        time.sleep(AFTER)
        # a partition that stopped is measured to where it committed again
        wait_for("every task committing again", progress.all_moving, 120, why)
        stall, where = progress.longest_stall()
    finally:
        sent = merge(before, producer.stop())
        progress.stop()
        progress.dump(tmp_path / "commits.jsonl")
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 180)
    exact_string_counts(records, sent)
    print(
        f"3->2 with session.timeout.ms at its default: balanced {took:.1f}s after the ask, "
        f"longest commit gap {stall:.2f}s ({where}) from {asked - progress.samples[0][0]:.0f}s "
        f"before the ask to {AFTER:.0f}s or more after balanced; {total} lines exact"
    )
    assert stall < GAP_BOUND, f"{where} committed nothing for {stall:.1f}s\n{why()}"
