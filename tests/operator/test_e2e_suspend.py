"""Scale to zero and back, end to end: `replicas: 0` suspends WordCount with its tasks
handed off cleanly (everything sent so far is counted exactly before the last pod goes),
its claims kept (`state.retention: Retain`), the app shown as Suspended; scaling up
again reuses the claims, so the new pods restore only the changelog's tail, and every
count is exact, including input sent while nothing ran."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient
from prometheus_client.parser import text_string_to_metric_families

from segue.operator.observe.scrape import http_get
from segue.protocol.names import DEFAULT_METRICS_PORT, METRICS_PATH, changelog_topic
from segue.protocol.reports import RECORDS_RESTORED
from segue.stack.apps import Apps, text_input
from tests.worker.harness import produce

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import PARTITIONS, assert_exact, diagnose, merge, prefill, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def changelog_records(bootstrap: str, application_id: str) -> int:
    """Records in the counts store's changelog (high watermarks summed)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "segue-test-watermarks"})
    try:
        topic = changelog_topic(application_id, "counts-store")
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        )
    finally:
        consumer.close()


def uncommitted(bootstrap: str, group: str, topic: str) -> int:
    """Committed records of ``topic`` past the group's committed offsets (read as the app
    reads: read_committed, so transaction markers are not counted as records)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    request = [ConsumerGroupTopicPartitions(group, partitions)]
    answer = admin.list_consumer_group_offsets(request)[group].result(timeout=30)
    start = [
        TopicPartition(topic, tp.partition, max(tp.offset, 0)) for tp in answer.topic_partitions
    ]
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "segue-test-uncommitted",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign(start)
    left, found = {tp.partition for tp in start}, 0
    deadline = time.monotonic() + 30
    try:
        while left and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                left.discard(message.partition())  # end of partition reached
            else:
                found += 1
    finally:
        consumer.close()
    assert not left, f"{topic}: partitions {sorted(left)} not read to their end"
    return found


def restored(apps: Apps, name: str) -> int:
    """Changelog records the app's pods have replayed into their stores since they started."""
    total = 0.0
    for pod in apps.pods(name).values():
        page = http_get(pod.status.pod_ip, DEFAULT_METRICS_PORT, METRICS_PATH, 5).decode()
        for family in text_string_to_metric_families(page):
            if family.name == RECORDS_RESTORED:
                total += sum(s.value for s in family.samples if s.name.endswith("_total"))
    return int(total)


def suspended(apps: Apps, name: str) -> bool:
    status = apps.status(name)
    return status.phase == "Suspended" and not apps.pods(name) and status.replicas == 0


def test_scale_to_zero_and_back_keeps_the_state_and_restores_only_the_tail(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    # The pods of the resume join in one batch within the product's default deadline
    # (30 s), not the suite's 5 s: a CI run's loaded machine took longer than 5 s to start
    # one, whose claim's stores the other then restored from scratch. The test is about
    # those claims, not about the deadline (tests/scaling/test_membership.py is).
    body, source, output = wordcount(kafka, "wc", 2, expansionTimeoutSeconds=30)
    body["spec"]["state"] = {"retention": "Retain", "volumeClaim": {"size": "1Gi"}}
    app_id = body["spec"]["applicationId"]
    apps.create(body)
    why = diagnose(apps, "wc", operator, pod_runner)
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    sent = prefill(kafka, source, 4000)
    producer = text_input(kafka.bootstrap_servers, source, words=60, rate=100)
    producer.start()
    time.sleep(3)
    sent = merge(sent, producer.stop())
    assert_exact(kafka, output, sent)  # drained, so the suspension has it all to commit

    apps.scale("wc", 0)
    took = wait_for("suspended", lambda: suspended(apps, "wc"), 120, why)
    # Handed off cleanly: the app's group committed everything it read, on its source
    # and on its repartition topic.
    for topic in (source, f"{app_id}-counts-store-repartition"):
        assert uncommitted(kafka.bootstrap_servers, app_id, topic) == 0, topic
    claims = apps.core.list_namespaced_persistent_volume_claim(apps.namespace).items
    assert sorted(c.metadata.name for c in claims) == ["state-wc-0", "state-wc-1"]
    reasons = {reason for reason, _ in apps.events("wc")}
    assert {"Suspending", "Suspended"} <= reasons
    assert "ScaleDownTimeout" not in reasons
    balanced = apps.condition("wc", "Balanced")
    assert balanced is not None
    assert (balanced.status, balanced.reason) == ("True", "Suspended")

    # Input keeps arriving while nothing runs; it waits in Kafka.
    late = [(str(i), f"w{i % 60}") for i in range(300)]
    produce(kafka.bootstrap_servers, source, late)
    for _, word in late:
        sent[word] = sent.get(word, 0) + 1
    changelog = changelog_records(kafka.bootstrap_servers, app_id)

    apps.scale("wc", 2)
    back = wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    assert_exact(kafka, output, sent)
    replayed = restored(apps, "wc")
    # The claims came back with their stores: only the tail is replayed, not the state.
    assert replayed <= changelog // 10, (replayed, changelog)
    print(
        f"suspend in {took:.1f}s, resume in {back:.1f}s; "
        f"{replayed} of {changelog} changelog records replayed on resume"
    )
