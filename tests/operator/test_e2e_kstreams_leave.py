"""A Kafka Streams app scaled down with Kafka's default session timeout (45 s): a pod
Segue removes leaves the group as it closes (the client supplier's ``Leaving``), so no
rebalance waits out the gone member's session and no input partition stops committing.
Kafka Streams alone closes without leaving the group, and the members were seen to commit
nothing for 44.7 s right after a 5 -> 3 (docs/kafka-streams.md, "A pod that goes away").

Two observations of it. The broker's own record (its group coordinator's log): the leaving
member left through a ``LeaveGroup`` request and no member of the group was removed for
a session or heartbeat that ran out. And the input's commits: no partition stood still
for a heartbeat interval (3 s, Kafka's default, left as it is), as a rebalance held for a
member's next heartbeat would at worst, and one held for its session (45 s) always. What
a partition does stop for is the one rebalance of the departure, Kafka Streams' own
handover of a moved task: 0.5-1.5 s on the host docs/benchmarks.md names, up to 2.3 s on
one half as fast."""

from __future__ import annotations

import re
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
GAP_BOUND = 3.0  # seconds: Kafka's default heartbeat.interval.ms, the app's too
# The coordinator's log lines (Kafka 4.x GroupMetadataManager) for a member that left as
# it closed, and for one removed because its session or heartbeat ran out
LEFT = re.compile(
    r"[Mm]ember \S+ (?:with instance id \S+ )?has left group through explicit `LeaveGroup`"
)
EXPIRED = ("has failed, removing it from the group", "on heartbeat expiration",
           "after session timeout expiration")  # fmt: skip
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
    left, expired = group_record(kafka.workdir / "server.log", app_id)
    assert left != [], "the broker saw no member leave the group"
    assert expired == [], expired
    assert stall < GAP_BOUND, f"{where} committed nothing for {stall:.1f}s\n{why()}"


def group_record(log: Path, group: str) -> tuple[list[str], list[str]]:
    """The broker's lines about ``group``: members that left by ``LeaveGroup``, and
    members removed for a session or heartbeat that ran out."""
    lines = [
        line for line in log.read_text(errors="replace").splitlines()
        if f"[Group {group}]" in line or f"[GroupId {group}]" in line or f"group {group} " in line
    ]  # fmt: skip
    return (
        [line for line in lines if LEFT.search(line)],
        [line for line in lines if any(text in line for text in EXPIRED)],
    )
