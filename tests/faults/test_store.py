"""Fault suite: a corrupt and a deleted local store of a running WordCount pod (issue 14).

Under the operator and steady input, one pod's RocksDB files are overwritten with
garbage and the other pod's state directory is deleted, while both workers run.
A running worker holds its store files open and serves from memory, so it goes on
counting; the damage shows when RocksDB opens the files again, here when the worker
process dies (SIGKILL of the container, as an OOM kill or a crash would) and the pod
runner restarts it on the same volume. Then the corrupt store must be wiped (said
in ``segue_store_wipes_total`` and the log, never served) and both stores restored
from the changelog, with every count exact, the app balanced again and processing
back within 15 s of the restart.

Helpers here (a pod's state directory, killing its worker, scraping its metrics) are
shared by ``test_volume.py``; the app and its checks are the operator suite's.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from segue.protocol import reports
from tests.operator.e2e import Apps, OperatorProcess, wait_for
from tests.operator.test_e2e_scaling import assert_exact, merge, running, wordcount
from tests.operator.test_e2e_secrets import scrape_workers

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
RESUME_BOUND = 15.0  # seconds from a fault's end to processing again (issue 14)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def worker_metrics(apps: Apps, pod: str) -> Samples:
    """One worker's /metrics as (name, sorted labels) -> value; empty if it does not answer."""
    try:
        text = scrape_workers(apps)[pod]
    except (OSError, KeyError):
        return {}
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def samples(metrics: Samples, name: str) -> Iterator[tuple[dict[str, str], float]]:
    for (found, labels), value in metrics.items():
        if found == name:
            yield dict(labels), value


def tasks_in(metrics: Samples, state: str) -> set[str]:
    return {
        labels["task"]
        for labels, value in samples(metrics, reports.TASK_STATE)
        if labels["state"] == state and value == 1
    }


def actives_running(apps: Apps, pod: str) -> bool:
    """Every task the worker holds as active is running (and it holds some)."""
    metrics = worker_metrics(apps, pod)
    actives = {
        labels["task"]
        for labels, value in samples(metrics, reports.TASK_ROLE)
        if labels["role"] == "active" and value == 1
    }
    return bool(actives) and actives <= tasks_in(metrics, "running")


def state_dir(runner: Any, apps: Apps, pod: str, application_id: str) -> Path:
    """The pod's state volume (an emptyDir) as the pod runner keeps it, this app's part."""
    uid = apps.pods("wc")[pod].metadata.uid
    return runner.pod_dir(apps.namespace, pod, uid) / "volumes" / "state" / application_id


def stores(directory: Path) -> list[Path]:
    """The RocksDB directories of the counting tasks' stores (``1_<n>/counts-store``)."""
    return sorted(directory.glob("1_*/counts-store"))


def restarts(apps: Apps, pod: str) -> int:
    statuses = apps.pods("wc")[pod].status.container_statuses or []
    return sum(c.restart_count for c in statuses)


def worker_pid(apps: Apps, pod: str) -> int:
    """The worker's process id (the pod runner's container id is ``segue://<pid>``)."""
    status = apps.pods("wc")[pod].status.container_statuses[0]
    return int(status.container_id.removeprefix("segue://"))


def kill_worker(apps: Apps, pod: str) -> None:
    """SIGKILL the container's process group: no chance to commit or close anything."""
    os.killpg(worker_pid(apps, pod), signal.SIGKILL)


def corrupt(store: Path) -> int:
    """Overwrite every file of a RocksDB directory in place with garbage; files hit."""
    hit = 0
    for path in sorted(store.iterdir()):
        if path.is_file() and path.name != "LOCK" and path.stat().st_size:
            size = path.stat().st_size
            with open(path, "r+b") as out:
                out.write(b"\xde\xad\xbe\xef" * (size // 4 + 1))
            hit += 1
    return hit


def restart_and_recover(apps: Apps, pod: str, why: Any) -> tuple[float, Samples]:
    """Kill the pod's worker; seconds until it runs every active task again, its metrics."""
    before = restarts(apps, pod)
    killed = time.monotonic()
    kill_worker(apps, pod)
    wait_for(f"{pod} restarted", lambda: restarts(apps, pod) > before, 60, why)
    wait_for(f"{pod} running its tasks again", lambda: actives_running(apps, pod), 60, why)
    took = time.monotonic() - killed
    return took, worker_metrics(apps, pod)


def restored(metrics: Samples) -> int:
    return int(sum(v for _, v in samples(metrics, "segue_task_restored_records_total")))


def wipes(metrics: Samples) -> dict[str, float]:
    return {labels["task"]: v for labels, v in samples(metrics, "segue_store_wipes_total") if v}


def test_a_corrupt_and_a_deleted_store_are_restored_from_the_changelog(
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    body, source, output = wordcount(kafka, "wc", 2)
    app_id = body["spec"]["applicationId"]
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=3000,
        rate=100,
    )
    try:
        time.sleep(3)  # the prefill counted, into every store
        first, second = sorted(apps.pods("wc"))

        # A corrupt store: every file of first's stores overwritten while it runs.
        damaged = stores(state_dir(pod_runner, apps, first, app_id))
        assert damaged, f"{first} has no counting store"
        assert all(corrupt(store) for store in damaged)
        time.sleep(2)  # still counting on its open files and memory
        corrupt_took, metrics = restart_and_recover(apps, first, why)
        wiped = wipes(metrics)
        assert {f"{s.parent.name}" for s in damaged} <= set(wiped), (damaged, wiped)
        corrupt_restored = restored(metrics)
        assert corrupt_restored > 0
        wait_for("balanced after the corrupt store", lambda: apps.balanced("wc", 2), 60, why)

        # A deleted store: second's whole state directory removed while it runs.
        directory = state_dir(pod_runner, apps, second, app_id)
        deleted = [s.parent.name for s in stores(directory)]
        assert deleted, f"{second} has no counting store"
        shutil.rmtree(directory)
        time.sleep(2)
        deleted_took, metrics = restart_and_recover(apps, second, why)
        deleted_restored = restored(metrics)
        assert deleted_restored > 0
        assert not wipes(metrics)  # nothing left to distrust: restored from the start
        wait_for("balanced after the deleted store", lambda: apps.balanced("wc", 2), 60, why)
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka, output, sent)
    assert corrupt_took < RESUME_BOUND, f"corrupt store: running again after {corrupt_took:.1f}s"
    assert deleted_took < RESUME_BOUND, f"deleted store: running again after {deleted_took:.1f}s"
    print(
        f"corrupt store ({len(damaged)} stores): running again {corrupt_took:.1f}s after the "
        f"kill, {corrupt_restored} records restored; deleted store ({len(deleted)} stores): "
        f"{deleted_took:.1f}s, {deleted_restored} restored; {sum(sent.values())} lines exact"
    )
