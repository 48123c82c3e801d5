"""Fault: a pod SIGKILLed mid-restore, and an active owner SIGKILLed (issue 14).

WordCount runs on 2 pods under the operator with steady input; a scale to 4 is in
flight, its learners restoring (paced, so still at it). First a learner's pod is
SIGKILLed (its process group, as the OOM killer or a crashed node would), then one
of the pods that owns active tasks. The pod runner restarts each container (the
kubelet's part); the restarted worker reopens its stores from their checkpoints and
restores only the changelog's tail. After each kill every task must commit again
within ``RESUME_BOUND``; in the end the app is balanced at 4, every count exact and
no task ever had two running owners. docs/reliability.md records the numbers.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_for

from .harness import NAME, scaling_up, sigkill

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def _member(apps: Apps, kind: str) -> str | None:
    """A member holding a learner copy (``learning``) or an active task (``active``)."""
    for m in apps.status(NAME).members or []:
        if (m.learning if kind == "learning" else m.active) and m.name in apps.pods(NAME):
            return m.name
    return None


def _restarts(apps: Apps, pod: str) -> int:
    statuses = apps.pods(NAME)[pod].status.container_statuses or []
    return sum(c.restart_count or 0 for c in statuses)


def test_sigkill_a_learner_mid_restore_and_an_active_owner(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    run = scaling_up(kafka, apps, operator, pod_runner, to=4)
    try:
        learner = _member(apps, "learning")
        assert learner is not None
        sigkill(apps, learner)
        killed_learner = time.monotonic()
        learner_resumed = run.resumed(killed_learner)
        owner = _member(apps, "active")
        assert owner is not None
        still_learning = apps.learning(NAME)
        sigkill(apps, owner)
        killed_owner = time.monotonic()
        owner_resumed = run.resumed(killed_owner)
        wait_for(
            "both containers restarted",
            lambda: _restarts(apps, learner) >= 1 and _restarts(apps, owner) >= 1, 60, run.why,
        )  # fmt: skip
        balanced = run.balanced(4, timeout=240)
    finally:
        run.stop()
    print(
        f"\nSIGKILL learner {learner}: every task committing {learner_resumed:.1f}s later; "
        f"SIGKILL active owner {owner} (learners still restoring: {still_learning}): every "
        f"task committing {owner_resumed:.1f}s later; balanced at 4 {balanced:.1f}s after; "
        f"{run.measured()}"
    )
    run.finish()
