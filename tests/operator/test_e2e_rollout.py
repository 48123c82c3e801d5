"""A template change rolls through the pods through learners, end to end: Tally under
steady keyed input, 3 pods with claims; an env change in `spec.template` restarts the
pods one at a time, each only after its active tasks were handed over, so the longest
pause in any key's output is a handover's, not a restart's plus a restore's. The peer,
in the same run: deleting the pods one by one by hand (each comes back under its name
with its claim and tasks). Every count is exact in both."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.names import TEMPLATE_HASH_LABEL
from segue.stack.apps import Apps, keyed_input
from tests.worker.harness import json_values, read_committed
from tests.worker.scenarios import check_exact

from .e2e import OperatorProcess, wait_for
from .test_e2e_membership import tally
from .test_e2e_scaling import diagnose

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
KEYS, RATE = 30, 300.0  # each key every 0.1 s


def longest_gap(outputs: list[dict[str, Any]], start: float, end: float) -> float:
    """The longest silence of any key between two of its outputs inside [start, end]."""
    by_key: dict[str, list[float]] = {}
    for doc in outputs:
        by_key.setdefault(doc["key"], []).append(doc["at"])
    gaps = [
        b - a
        for times in by_key.values()
        for a, b in itertools.pairwise(sorted(times))
        if start <= b and a <= end
    ]
    return max(gaps, default=0.0)


def rolled(apps: Apps, name: str, old: dict[str, str]) -> bool:
    status = apps.status(name)
    progressing = apps.condition(name, "Progressing")
    pods = apps.pods(name)
    return (
        progressing is not None
        and progressing.reason == "UpToDate"
        and status.updated_replicas == 3
        and all(p.metadata.uid != old.get(n) for n, p in pods.items())
        and apps.balanced(name, 3)
    )


def test_a_template_change_rolls_through_learners_faster_than_deleting_pods_by_hand(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output = tally(
        kafka, 3, state={"volumeClaim": {"size": "1Gi"}, "retention": "Delete"}
    )
    apps.create(body)
    why = diagnose(apps, "tally", operator, pod_runner)
    wait_for("3 pods balanced", lambda: apps.balanced("tally", 3), 120, why)
    claims = {
        c.metadata.name: c.metadata.uid
        for c in apps.core.list_namespaced_persistent_volume_claim(apps.namespace).items
    }
    producer = keyed_input(kafka.bootstrap_servers, source, keys=KEYS, rate=RATE)
    producer.start()
    try:
        time.sleep(3)
        # Segue: a template change, rolled by the operator.
        old = {n: p.metadata.uid for n, p in apps.pods("tally").items()}
        hashes = {p.metadata.labels[TEMPLATE_HASH_LABEL] for p in apps.pods("tally").values()}
        env = [*body["spec"]["template"]["env"], {"name": "ROLLED", "value": "1"}]
        rolling_from = time.time()
        apps.custom.patch_namespaced_custom_object(
            GROUP, VERSION, apps.namespace, PLURAL, "tally",
            {"spec": {"template": {"env": env}}},
        )  # fmt: skip
        took = wait_for("the rollout done", lambda: rolled(apps, "tally", old), 300, why)
        rolling_to = time.time()
        new_hashes = {p.metadata.labels[TEMPLATE_HASH_LABEL] for p in apps.pods("tally").values()}
        assert len(new_hashes) == 1
        assert new_hashes.isdisjoint(hashes)
        time.sleep(2)

        # By hand: delete each pod and wait for it to come back, one at a time.
        by_hand_from = time.time()
        for name in sorted(apps.pods("tally")):
            uid = apps.pods("tally")[name].metadata.uid
            apps.core.delete_namespaced_pod(name, apps.namespace)
            wait_for(
                f"{name} back",
                lambda name=name, uid=uid: (
                    (p := apps.pods("tally").get(name)) is not None
                    and p.metadata.uid != uid
                    and apps.balanced("tally", 3)
                ),
                120,
                why,
            )
        by_hand_to = time.time()
        time.sleep(2)
    finally:
        sent = producer.stop()
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 120)
    check_exact(records, sent)
    outputs = json_values(records)
    rolling = longest_gap(outputs, rolling_from, rolling_to)
    by_hand = longest_gap(outputs, by_hand_from, by_hand_to)
    reasons = [reason for reason, _ in apps.events("tally")]
    assert {"RollingUpdate", "PodRestarting", "RolloutComplete"} <= set(reasons)
    assert "ScaleDownTimeout" not in reasons
    kept = {
        c.metadata.name: c.metadata.uid
        for c in apps.core.list_namespaced_persistent_volume_claim(apps.namespace).items
    }
    assert kept == claims  # restarted pods came back to their own claims
    print(
        f"rollout of 3 pods in {took:.1f}s: longest pause {rolling * 1000:.0f} ms; "
        f"deleting them by hand: {by_hand * 1000:.0f} ms"
    )
    assert rolling < by_hand, (rolling, by_hand)
