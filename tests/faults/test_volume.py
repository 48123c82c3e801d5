"""Fault suite: a full state volume under a running WordCount pod (issue 14).

What is simulated, and how: the local stack has no root and no block devices, so
the volume cannot really fill. Instead the worker process gets RLIMIT_FSIZE 0
(``prlimit`` from outside, as its owner may): every write that would extend a file
fails with EFBIG ("File too large"), which is how a full filesystem fails writes
(ENOSPC), seen from RocksDB and the worker alike. Overwrites in place still work,
as they do on a full filesystem. The worker's log must survive the fault, so the
pod runs the worker under ``sh -c '... | cat'``: ``cat`` writes the log, as a
container runtime would, and only the worker's own writes are refused.

Segue must say so (``segue_task_error{reason="StoreFull"}``, ``Degraded``/``StoreFull``
naming the tasks, a Warning event), lose nothing and not wipe the store (its files
still hold a committed prefix of the changelog), and once the limit is lifted
("space returns") the task must run again within 15 s, the app balanced again and
every count exact.
"""

from __future__ import annotations

import resource
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from segue.protocol import reports
from tests.operator.e2e import Apps, OperatorProcess, wait_for
from tests.operator.test_e2e_scaling import assert_exact, merge, running, wordcount

from .test_bad_edit import degraded
from .test_store import RESUME_BOUND, actives_running, samples, wipes, worker_metrics, worker_pid

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
FULL_FOR = 8.0  # seconds the volume stays full once Segue has said so


def worker_process(apps: Apps, pod: str) -> int:
    """The ``segue worker`` process under the container's ``sh`` (its child)."""
    shell = worker_pid(apps, pod)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == shell and b"segue\x00worker" in command:
            return int(stat.parent.name)
    raise AssertionError(f"{pod}: no worker process under {shell}")


def store_full(apps: Apps, pod: str) -> set[str]:
    """Tasks the pod's worker reports as ``StoreFull``."""
    return {
        labels["task"]
        for labels, value in samples(worker_metrics(apps, pod), reports.TASK_ERROR)
        if value == 1 and labels["reason"] == "StoreFull"
    }


def test_a_full_volume_is_reported_loses_nothing_and_recovers_when_space_returns(
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    body, source, output = wordcount(kafka, "wc", 2)
    template = body["spec"]["template"]
    template["command"] = ["/bin/sh", "-c", shlex.join(template["command"]) + " 2>&1 | /bin/cat"]
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=1500,
        rate=100,
    )
    try:
        time.sleep(3)
        pod = sorted(apps.pods("wc"))[0]
        pid = worker_process(apps, pod)
        soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
        filled = time.monotonic()
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))  # the volume is full
        try:
            said = wait_for("the worker says StoreFull", lambda: store_full(apps, pod), 30, why)
            wait_for("Degraded: StoreFull", lambda: degraded(apps, "wc"), 30, why)
            found = degraded(apps, "wc")
            assert found is not None
            reason, message = found
            assert reason == "StoreFull", found
            assert pod in message, message
            assert "volume full (File too large)" in message, message
            assert "StoreFull" in {r for r, _ in apps.events("wc")}
            full_tasks = store_full(apps, pod)
            assert full_tasks, "no task reported StoreFull"
            assert all(t.startswith("1_") for t in full_tasks), full_tasks
            time.sleep(FULL_FOR)
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))  # space returns
        freed = time.monotonic()
        back = wait_for("its tasks running again", lambda: actives_running(apps, pod), 60, why)
        metrics = worker_metrics(apps, pod)
        assert not wipes(metrics), wipes(metrics)  # full is not damage: the state was kept
        assert worker_process(apps, pod) == pid  # recovered in place, no restart
        wait_for(
            "Degraded cleared, balanced",
            lambda: degraded(apps, "wc") is None and apps.balanced("wc", 2),
            60,
            why,
        )
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka, output, sent)
    assert back < RESUME_BOUND, f"running again {back:.1f}s after space returned"
    print(
        f"full volume: StoreFull reported {said:.1f}s after the limit, full for "
        f"{freed - filled:.1f}s; tasks {sorted(full_tasks)} running again {back:.1f}s after "
        f"space returned; {sum(sent.values())} lines exact"
    )
