"""Fault: a corrupt and a deleted local store of a running WordCount pod (issue 14).

Under the operator and steady input (the suite's ``harness``), one pod's RocksDB
files are overwritten with garbage and the other pod's state directory is deleted,
while both workers run. A running worker holds its store files open and serves from
memory, so it goes on counting; the damage shows when RocksDB opens the files again,
here when the worker process dies (SIGKILL of the container, as an OOM kill or a
crash would) and the pod runner restarts it on the same emptyDir. Then the corrupt
stores must be wiped (``segue_store_wipes_total``, an ERROR in the log; never
served) and both pods' stores restored from the changelog: every task committing
again within ``RESUME_BOUND`` of the kill, the app balanced again, every count
exact, never two owners of a task.

The helpers that read one worker's page (``report``, ``samples``) are shared with
``test_volume``.
"""

from __future__ import annotations

import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from segue.operator.observe.scrape import ScrapeError, WorkerReport, scrape
from segue.protocol import reports
from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_for

from .harness import METRICS_PORT, NAME, RESUME_BOUND, FaultRun, running_actives, sigkill, start

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
AFTER_KILL = 0.5  # seconds: more than Progress's sampling interval


def report(apps: Apps, pod: str) -> WorkerReport | None:
    """The pod's worker page as the operator reads it; None while it does not answer."""
    try:
        return scrape(apps.pods(NAME)[pod].status.pod_ip, METRICS_PORT, timeout=1.0)
    except (ScrapeError, KeyError):
        return None


def samples(apps: Apps, pod: str, name: str) -> Iterator[tuple[dict[str, str], float]]:
    """(labels, value) of every sample of ``name`` on the pod's worker page: what
    ``WorkerReport`` does not carry (``segue_store_wipes_total``)."""
    url = f"http://{apps.pods(NAME)[pod].status.pod_ip}:{METRICS_PORT}/metrics"
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                yield dict(sample.labels), sample.value


def actives_running(apps: Apps, pod: str) -> bool:
    """The pod's worker runs every task it holds as active (and holds some)."""
    found = report(apps, pod)
    if found is None:
        return False
    actives = {t for t, role in found.roles.items() if role == "active"}
    return bool(actives) and actives <= running_actives(found)


def wiped(apps: Apps, pod: str) -> set[str]:
    """Tasks whose store the pod's worker wiped as untrusted since it started."""
    return {
        labels["task"]
        for labels, value in samples(apps, pod, f"{reports.STORE_WIPES}_total")
        if value > 0
    }


def state_dir(runner: Any, apps: Apps, pod: str, application_id: str) -> Path:
    """This app's part of the pod's state volume (an emptyDir) on the pod runner's disk."""
    uid = apps.pods(NAME)[pod].metadata.uid
    return runner.pod_dir(apps.namespace, pod, uid) / "volumes" / "state" / application_id


def stores(directory: Path) -> list[Path]:
    """The RocksDB directories of the counting tasks' stores (``1_<n>/counts-store``)."""
    return sorted(directory.glob("1_*/counts-store"))


def corrupt(store: Path) -> int:
    """Overwrite every file of a RocksDB directory in place with garbage; files hit."""
    hit = 0
    for path in sorted(store.iterdir()):
        size = path.stat().st_size if path.is_file() else 0
        if size and path.name != "LOCK":
            with open(path, "r+b") as out:
                out.write(b"\xde\xad\xbe\xef" * (size // 4 + 1))
            hit += 1
    return hit


def goes_on_counting(run: FaultRun, damage: str) -> float:
    """Seconds until every task of the app has committed since now, the store's damage
    done: a running worker does not notice it until it opens the store again."""
    since = time.monotonic()

    def counted() -> bool:
        return all(any(t > since for t in times) for times in run.progress.advances().values())

    return wait_for(f"every task committing on the {damage} store", counted, RESUME_BOUND, run.why)


def kill_and_recover(run: FaultRun, pod: str) -> tuple[float, float, WorkerReport]:
    """SIGKILL the pod's worker: seconds from the kill until every task of the app
    commits again and until the restarted worker runs all its actives; its page then."""
    old = sigkill(run.apps, pod)
    killed = time.monotonic()
    # Progress compares with its last sample at or before the moment given: start from
    # one taken after the kill (samples are 0.25 s apart), so that a commit made just
    # before the kill does not count as resuming.
    resumed = run.resumed(killed + AFTER_KILL) + AFTER_KILL
    wait_for(f"{pod} running its tasks again", lambda: actives_running(run.apps, pod), 60, run.why)
    restarted = time.monotonic() - killed
    found = report(run.apps, pod)
    assert found is not None
    assert run.apps.pods(NAME)[pod].status.container_statuses[0].container_id != f"segue://{old}"
    return resumed, restarted, found


def test_a_corrupt_and_a_deleted_store_are_restored_from_the_changelog(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    run = start(kafka, apps, operator, pod_runner, replicas=2, lines=3000, rate=100)
    try:
        first, second = sorted(apps.pods(NAME))

        # A corrupt store: every file of first's stores overwritten while it runs.
        damaged = stores(state_dir(pod_runner, apps, first, run.app_id))
        assert damaged, f"{first} has no counting store"
        assert all(corrupt(store) for store in damaged)
        goes_on_counting(run, "corrupt")  # on its open files and memory
        corrupt_resumed, corrupt_running, page = kill_and_recover(run, first)
        damaged_tasks = {s.parent.name for s in damaged}
        assert damaged_tasks <= wiped(apps, first), (damaged_tasks, wiped(apps, first))
        corrupt_restored = sum(page.restored_records.values())
        assert corrupt_restored > 0
        run.balanced(2, timeout=60)

        # A deleted store: second's whole state directory removed while it runs.
        directory = state_dir(pod_runner, apps, second, run.app_id)
        deleted = {s.parent.name for s in stores(directory)}
        assert deleted, f"{second} has no counting store"
        shutil.rmtree(directory)
        goes_on_counting(run, "deleted")
        deleted_resumed, deleted_running, page = kill_and_recover(run, second)
        deleted_restored = sum(page.restored_records.values())
        assert deleted_restored > 0
        assert not wiped(apps, second)  # nothing left to distrust: restored from the start
        balanced = run.balanced(2, timeout=60)
    finally:
        run.stop()
    run.finish()
    print(
        f"\ncorrupt store ({len(damaged)} stores on {first}): wiped, every task committing "
        f"{corrupt_resumed:.1f}s after the kill, its actives running "
        f"{corrupt_running:.1f}s after it, {corrupt_restored} records restored; deleted store "
        f"({len(deleted)} stores on {second}): every task committing {deleted_resumed:.1f}s "
        f"after the kill, running {deleted_running:.1f}s after it, {deleted_restored} restored; "
        f"balanced {balanced:.1f}s later; {sum(run.sent.values())} lines exact; owner "
        f"overlaps {[(o.task, round(o.seconds, 2)) for o in run.owners.overlaps]}"
    )
