"""Static membership and partition expansion end to end: a deleted pod comes back under
its name and keeps its tasks; a stateful app's source topic doubled mid-run keeps every
key's count exact (Tally counts its keyed input directly, without repartition, and its
topology is read from the workers' /topology, not the spec)."""

from __future__ import annotations

import base64
import gzip
import json
import time
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions

from segue.stack.apps import Apps, keyed_input
from tests.worker.harness import create_topics, read_committed
from tests.worker.scenarios import check_exact

from .e2e import OperatorProcess, streamapp, wait_event, wait_for, worker_command
from .test_e2e_scaling import diagnose

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def tally(
    kafka: Any, replicas: int, partitions: int = 6, **extra: Any
) -> tuple[dict[str, Any], str, str]:
    tag = uuid.uuid4().hex[:6]
    app_id, source, output = f"tally-{tag}", f"in-{tag}", f"out-{tag}"
    create_topics(kafka.bootstrap_servers, {source: partitions, output: partitions})
    body = streamapp(
        "tally",
        application_id=app_id,
        bootstrap=kafka.bootstrap_servers,
        command=worker_command("segue.worker.apps.tally:topology", input=source, output=output),
        replicas=replicas,
        scaling={"acceptableRecoveryLag": 50},
        **extra,
    )
    return body, source, output


def owners(apps: Apps, name: str) -> tuple[int, dict[str, list[str]]]:
    cm = apps.core.read_namespaced_config_map(f"{name}-assignment", apps.namespace)
    doc = json.loads(gzip.decompress(base64.b64decode(cm.binary_data["assignment.json.gz"])))
    return doc["generation"], {m: sorted(r["active"]) for m, r in doc["members"].items()}


def test_a_deleted_pod_comes_back_with_its_name_and_keeps_its_tasks(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output = tally(
        kafka, 3, state={"volumeClaim": {"size": "1Gi"}, "retention": "Delete"}
    )
    apps.create(body)
    why = diagnose(apps, "tally", operator, pod_runner)
    wait_for("3 pods balanced", lambda: apps.balanced("tally", 3), 120, why)
    generation, before = owners(apps, "tally")
    producer = keyed_input(kafka.bootstrap_servers, source, keys=50, rate=200)
    producer.start()
    try:
        time.sleep(2)
        old_uid = apps.pods("tally")["tally-1"].metadata.uid
        apps.core.delete_namespaced_pod("tally-1", apps.namespace)
        wait_for(
            "tally-1 recreated and ready",
            lambda: (
                (p := apps.pods("tally").get("tally-1")) is not None
                and p.metadata.uid != old_uid
                and apps.balanced("tally", 3)
            ),
            120,
            why,
        )
        time.sleep(2)
    finally:
        sent = producer.stop()
    after_generation, after = owners(apps, "tally")
    assert after == before, f"tasks moved: {before} -> {after}"
    assert after_generation == generation, "a new generation was published for a restart"
    reasons = {r for r, _ in apps.events("tally")}
    assert "TaskHandedOver" not in reasons, reasons
    assert "MemberExpired" not in reasons, reasons
    claims = apps.core.list_namespaced_persistent_volume_claim(apps.namespace).items
    assert sorted(c.metadata.name for c in claims) == [f"state-tally-{i}" for i in range(3)]
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 120)
    check_exact(records, sent)


def test_doubling_a_stateful_source_keeps_every_key_exact(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output = tally(kafka, 2)
    apps.create(body)
    why = diagnose(apps, "tally", operator, pod_runner)
    wait_for("2 pods balanced", lambda: apps.balanced("tally", 2), 120, why)
    producer = keyed_input(kafka.bootstrap_servers, source, keys=40, rate=200)
    producer.start()
    try:
        time.sleep(3)
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        for future in admin.create_partitions([NewPartitions(source, 12)]).values():
            future.result(30)
        wait_for(
            "expansion published",
            lambda: "PartitionsExpanded" in {r for r, _ in apps.events("tally")},
            60,
            why,
        )
        time.sleep(6)  # keys now also land in partitions 6..11
    finally:
        sent = producer.stop()
    _, members = owners(apps, "tally")
    tasks = sorted(t for held in members.values() for t in held)
    assert tasks == [f"0_{p}" for p in range(6)], tasks  # the task count never changes
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 120)
    check_exact(records, sent)
    grown = read_committed(kafka.bootstrap_servers, source, lambda r: len(r) >= total, 60)
    assert any(p >= 6 for p, *_ in grown), "no record landed in a new partition"
    assert getattr(apps.condition("tally", "Degraded"), "status", None) == "False"


def test_growing_a_stateful_source_by_a_non_multiple_is_refused(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, _ = tally(kafka, 1, partitions=4)
    apps.create(body)
    why = diagnose(apps, "tally", operator, pod_runner)
    wait_for("1 pod balanced", lambda: apps.balanced("tally", 1), 120, why)
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for future in admin.create_partitions([NewPartitions(source, 6)]).values():
        future.result(30)
    wait_for(
        "Degraded: PartitionExpansionRefused",
        lambda: (
            getattr(apps.condition("tally", "Degraded"), "reason", None)
            == "PartitionExpansionRefused"
        ),
        60,
        why,
    )
    assert "multiple of 4" in getattr(apps.condition("tally", "Degraded"), "message", "")
    wait_event(apps, "tally", "PartitionExpansionRefused")
    _, members = owners(apps, "tally")
    assert sorted(t for held in members.values() for t in held) == [f"0_{p}" for p in range(4)]
