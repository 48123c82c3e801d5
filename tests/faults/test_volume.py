"""Fault: a full state volume under a running WordCount pod (issue 14).

What is simulated, and how: the local stack has no root and no block devices, so
a volume cannot really fill. Instead one worker process gets RLIMIT_FSIZE 0
(``prlimit`` from outside, as the process's owner may): every write that would
extend a file fails with EFBIG ("File too large"), which is how writes on a full
filesystem fail (ENOSPC), seen from RocksDB and the worker alike; overwrites in
place still work, as on a full filesystem. The limit is per process, not per
volume: the worker's log (its stdout, a file under the pod runner) cannot grow
either while it lasts, so its metrics and the StreamApp's status tell the story.

Segue must say so (``segue_task_error{reason="StoreFull"}``, ``Degraded``/
``StoreFull`` naming the pod, the tasks and the cause, a Warning event, the pod
unready), keep the store (its files still hold a committed prefix of the
changelog: not wiped), and once the limit is lifted ("space returns") every task
must commit again within ``RESUME_BOUND``, without a restart, the app balanced
again, every count exact and never two owners of a task.
"""

from __future__ import annotations

import resource
import time
from typing import Any

import pytest

from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_event, wait_for
from tests.operator.test_e2e_health import degraded

from .harness import NAME, container_pid, running_actives, start
from .test_store import actives_running, report, wiped

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
FULL_FOR = 4.0  # seconds the volume stays full once Segue has said all of it


def store_full(apps: Apps, pod: str) -> set[str]:
    """Tasks the pod's worker reports as ``StoreFull``."""
    found = report(apps, pod)
    errors = found.task_errors if found is not None else {}
    return {task for task, (reason, _) in errors.items() if reason == "StoreFull"}


def ready(apps: Apps, pod: str) -> bool:
    """The pod's member is ready, as the StreamApp's status says."""
    return any(m.ready for m in apps.status(NAME).members or [] if m.name == pod)


def test_a_full_volume_is_reported_loses_nothing_and_recovers_when_space_returns(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    run = start(kafka, apps, operator, pod_runner, replicas=2, lines=1500, rate=100)
    try:
        pod = sorted(apps.pods(NAME))[0]
        pid = container_pid(apps, pod)
        soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
        filled = time.monotonic()
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))  # the volume is full
        try:
            said = wait_for("the worker says StoreFull", lambda: store_full(apps, pod), 30, run.why)
            wait_for("Degraded: StoreFull", lambda: degraded(apps, NAME), 30, run.why)
            found = degraded(apps, NAME)
            assert found is not None
            reason, message = found
            assert reason == "StoreFull", found
            assert pod in message, message
            assert "volume full (File too large)" in message, message
            wait_event(apps, NAME, "StoreFull")
            full_tasks = store_full(apps, pod)
            assert full_tasks, "no task reported StoreFull"
            assert all(t.startswith("1_") for t in full_tasks), full_tasks  # the stateful ones
            wait_for("the pod unready", lambda: not ready(apps, pod), 30, run.why)
            page = report(apps, pod)
            assert page is not None
            stateless = {t for t, r in page.roles.items() if r == "active" and t.startswith("0_")}
            assert stateless <= running_actives(page), "tasks with no store stopped too"
            time.sleep(FULL_FOR)
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))  # space returns
        freed = time.monotonic()
        resumed = run.resumed(freed)
        back = wait_for("its tasks running again", lambda: actives_running(apps, pod), 60, run.why)
        assert not wiped(apps, pod)  # full is not damage: the state was kept
        assert container_pid(apps, pod) == pid  # recovered in place, no restart
        balanced = wait_for(
            "Degraded cleared, balanced",
            lambda: degraded(apps, NAME) is None and apps.balanced(NAME, 2),
            60,
            run.why,
        )
    finally:
        run.stop()
    run.finish()
    print(
        f"\nfull volume on {pod}: StoreFull reported {said:.1f}s after the limit, full for "
        f"{freed - filled:.1f}s; tasks {sorted(full_tasks)}; every task committing "
        f"{resumed:.1f}s after space returned, its actives running after {back:.1f}s, "
        f"balanced and Degraded cleared {balanced:.1f}s later; {sum(run.sent.values())} "
        f"lines exact; owner overlaps "
        f"{[(o.task, round(o.seconds, 2)) for o in run.owners.overlaps]}"
    )
