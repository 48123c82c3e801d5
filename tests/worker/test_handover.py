"""A learner catches up while the active keeps processing, then takes over with
exact counts; the handover pause (last record committed by the old owner to the
first committed by the new one) is measured and printed. ``bench/worker`` runs
the same scenario with more rounds for p50/p99."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.faults.resumes import END, START, resumes

from .scenarios import handover

pytestmark = pytest.mark.worker


def test_learner_takes_over_with_exact_counts(
    kafka: Any, kube: Any, kube_api: Any, namespace: str, tmp_path: Path
) -> None:
    result = handover(
        bootstrap=kafka.bootstrap_servers,
        kube_api=kube_api,
        kubeconfig=kube.kubeconfig,
        namespace=namespace,
        workdir=tmp_path,
        rounds=4,
    )
    print(f"\nhandover pause: {result.summary()}")
    assert result.handovers == 4
    assert len(result.pauses) == 4 * 4  # every task changed owner every round
    # A learner that caught up takes over without replaying its state: well under a
    # second here (a full restore or a stuck fence would take far longer).
    assert max(result.pauses) < 3.0, result.summary()


def test_exact_counts_when_every_handover_races_the_fence(
    kafka: Any, kube: Any, kube_api: Any, namespace: str, tmp_path: Path
) -> None:
    """With no fence delay the new owner fences the old one mid-transaction: its
    open work is aborted and redone by the new owner, and nothing is lost or doubled."""
    result = handover(
        bootstrap=kafka.bootstrap_servers,
        kube_api=kube_api,
        kubeconfig=kube.kubeconfig,
        namespace=namespace,
        workdir=tmp_path,
        rounds=3,
        extra=["--fence-delay-ms", "0"],
    )
    assert result.handovers == 3
    # every new owner resumed its input where the last one's commits left it, as the
    # workers' own lines say (what tests/faults/resumes.py reads after a failed count)
    logs = [(p.name, p.read_text(errors="replace")) for p in sorted(tmp_path.glob("*.log"))]
    lines = [line for _, text in logs for line in text.splitlines()]
    assert sum(1 for line in lines if START.search(line)) >= 3 * 4, "starts not logged"
    assert sum(1 for line in lines if END.search(line)) >= 3 * 4, "ends not logged"
    assert resumes(logs) == []
