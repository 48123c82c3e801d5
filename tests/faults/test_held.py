"""Fault suite: a sink partition held by a transaction nobody ends (issue 26, item 4).

WordCount runs under the operator with steady input, the operator reading the
workers' ``/topology`` (so it knows the output topic). A producer of its own
transactional id, with a 10-minute ``transaction.timeout.ms`` (the broker allows up to
its ``transaction.max.timeout.ms``, 15 minutes by default), writes one record into
output partition 3 and never ends its transaction: the partition's last stable offset
stays at that record while the app's commits pile up behind it, as with a transaction
Kafka left hanging (docs/reliability.md). Past the bound no live transaction of the app
can reach, the StreamApp's ``TransactionsEnded`` condition turns ``False``
(``TransactionHanging``) naming the partition, the offset and the commands, with one
Warning event. The test then runs the status's own ``abort`` command with the real
``kafka-transactions.sh`` the stack installed: the condition clears by itself with a
Normal event, the app stayed balanced, and every count is exact (the aborted record is
never read).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from segue.operator.scaling.hanging import BOUND
from segue.stack.apps import Apps
from segue.worker.kafka import producer_config
from tests.operator.e2e import OperatorProcess, wait_event, wait_for

from .harness import NAME, start

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(360)]

TOOL = Path(sys.executable).parent / "kafka-transactions.sh"  # stack/install/bin.sh
PARTITION = 3
STEPS = "segue_operator_reconcile_duration_seconds_count"  # one per operator step of an app


def ended(apps: Apps) -> tuple[str, str, str]:
    c = apps.condition(NAME, "TransactionsEnded")
    return (c.status, c.reason, c.message) if c is not None else ("", "", "")


def command(message: str, verb: str) -> list[str]:
    """The status's own command for ``verb``, run with the stack's tool."""
    found = re.findall(r"`(kafka-transactions\.sh [^`]*)`", message)
    line = next(c for c in found if f" {verb} " in c)
    return [str(TOOL), *shlex.split(line)[1:]]


def looks(operator: OperatorProcess) -> float:
    """The operator's steps of the app so far (its reconcile duration's count)."""
    return operator.samples(NAME, STEPS).get(STEPS, 0.0)


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)


def test_a_held_sink_partition_is_said_with_its_commands_and_clears_once_aborted(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    run = start(kafka, apps, operator, pod_runner, replicas=2, lines=600, described=True)
    why = run.why
    bootstrap = kafka.bootstrap_servers
    extra = {"transaction.timeout.ms": 600_000}
    holder = Producer(producer_config(bootstrap, f"holder-{uuid.uuid4().hex[:6]}", extra))
    offsets: list[int] = []
    try:
        assert ended(apps)[:2] == ("True", "NoneHanging"), ended(apps)
        holder.init_transactions(30)
        holder.begin_transaction()
        holder.produce(
            run.output, b"\x00", key=b"held", partition=PARTITION,
            on_delivery=lambda err, msg: offsets.append(msg.offset()),
        )  # fmt: skip
        holder.flush(10)  # written, never ended: the partition is held from here
        held_at, (offset,) = time.monotonic(), offsets
        took = wait_for(
            "TransactionsEnded False", lambda: ended(apps)[0] == "False", BOUND + 30, why
        )
        assert took > BOUND - 5, f"said held after {took:.1f}s, before the bound {BOUND}s"
        _, reason, message = ended(apps)
        assert reason == "TransactionHanging", message
        assert f"sink {run.output}[{PARTITION}] at offset {offset}:" in message, message
        where = f"--topic {run.output} --partition {PARTITION}"
        assert f"--bootstrap-server {bootstrap} abort {where} --start-offset {offset}`" in message
        assert f"--bootstrap-server {bootstrap} find-hanging {where}`" in message
        wait_event(apps, NAME, "TransactionHanging", message, 10)
        assert apps.balanced(NAME, 2)  # the app itself is not broken
        seen = looks(operator)
        wait_for("two more looks", lambda: looks(operator) >= seen + 2, 10, why)  # said once
        assert apps.event_counts(NAME)["TransactionHanging"] == [1]

        found = _run(command(message, "find-hanging"))
        assert found.returncode == 0, found.stderr
        aborted = _run(command(message, "abort"))
        assert aborted.returncode == 0, aborted.stderr
        done = time.monotonic()
        cleared = wait_for("TransactionsEnded True", lambda: ended(apps)[0] == "True", 30, why)
        wait_event(apps, NAME, "TransactionEnded", timeout=10)
        assert apps.balanced(NAME, 2)
    finally:
        run.stop()
    run.finish()
    print(
        f"\nheld sink {run.output}[{PARTITION}] at {offset}: TransactionHanging "
        f"{took:.1f}s after the write (bound {BOUND:g}s), cleared {cleared:.1f}s after the "
        f"abort ({done - held_at:.0f}s held); {run.measured()}"
    )
