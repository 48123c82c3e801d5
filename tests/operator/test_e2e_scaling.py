"""The operator end to end: real API server, real Kafka, worker pods under the pod
runner, WordCount under steady input. Scaling through /scale ends balanced with every
count exact; the operator killed mid-scale resumes; a learner that never catches up
hits scaleDownTimeout and nothing is lost."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.status import ScalingMemory, from_timestamp
from segue.stack.apps import Apps, text_input
from tests.worker.harness import create_topics, read_committed

from .e2e import OperatorProcess, exact_counts, streamapp, wait_for, worker_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
PARTITIONS = 6
REPORT: list[str] = []


def wordcount(
    kafka: Any,
    name: str,
    replicas: int,
    env: dict[str, str] | None = None,
    create_output: bool = True,
    **scaling: Any,
) -> tuple[dict[str, Any], str, str]:
    tag = uuid.uuid4().hex[:6]
    app_id, source, output = f"wc-{tag}", f"text-{tag}", f"counts-{tag}"
    topics = {source: PARTITIONS, output: PARTITIONS} if create_output else {source: PARTITIONS}
    create_topics(kafka.bootstrap_servers, topics)
    body = streamapp(
        name,
        application_id=app_id,
        bootstrap=kafka.bootstrap_servers,
        command=worker_command("segue.worker.apps.wordcount:topology", input=source, output=output),
        replicas=replicas,
        topology=[
            {"id": 0, "sourceTopics": [source]},
            {
                "id": 1,
                "sourceTopics": [f"{app_id}-counts-store-repartition"],
                "stores": ["counts-store"],
            },
        ],
        scaling={"acceptableRecoveryLag": 50, **scaling},
    )
    for key, value in (env or {}).items():
        body["spec"]["template"]["env"].append({"name": key, "value": value})
    return body, source, output


def diagnose(apps: Apps, name: str, operator: OperatorProcess, runner: Any) -> Any:
    def text() -> str:
        events = apps.events(name)[-15:]
        pods = []
        for pod_name, pod in sorted(apps.pods(name).items()):
            path = runner.log_path(apps.namespace, pod_name, pod.metadata.uid, "worker")
            tail = path.read_text(errors="replace")[-1500:] if path and path.exists() else ""
            pods.append(f"--- {pod_name} {pod.status.phase} {pod.status.pod_ip}\n{tail}")
        return (
            f"status: {apps.status(name)}\nevents: {events}\n"
            + "\n".join(pods)
            + f"\n--- operator\n{operator.logs()[-5000:]}"
        )

    return text


def test_scale_up_and_down_through_the_scale_subresource(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output = wordcount(kafka, "wc", 2)
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=3000,
        rate=200,
    )  # state enough that new owners must learn it
    try:
        settled = last_scale(apps, "wc")
        asked = time.time()
        apps.scale("wc", 4)
        up = wait_for("4 pods balanced", lambda: apps.balanced("wc", 4), 180, why)
        scaled_up = last_scale(apps, "wc")
        apps.scale("wc", 2)
        down = wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 180, why)
        scaled_down = last_scale(apps, "wc")
    finally:
        sent = merge(before, producer.stop())
    total = sum(sent.values())
    records = read_committed(
        kafka.bootstrap_servers, output, lambda r: len(r) >= total, timeout=120
    )
    exact_counts(records, sent)
    reasons = {reason for reason, _ in apps.events("wc")}
    assert {
        "ScalingUp",
        "LearnersAssigned",
        "TaskHandedOver",
        "ScaleDownStarted",
        "MemberLeft",
    } <= reasons
    assert "ScaleDownTimeout" not in reasons
    # Once per transition, aggregated per reason: 0->2 and 2->4 are two scale-ups.
    counts = apps.event_counts("wc")
    assert counts["ScalingUp"] == [2]
    assert counts["ScaleDownStarted"] == [1]
    # status.lastScaleTime says when each scale started (kubectl's LAST SCALE column).
    assert settled is not None
    assert scaled_up is not None
    assert scaled_down is not None
    assert settled < asked - 0.5 < scaled_up < asked + up < scaled_down
    metrics = operator.metrics()
    assert "segue_operator_handover_duration_seconds_count" in metrics
    # the status as metrics, for alerts (charts/segue/templates/prometheusrule.yaml)
    said = f'namespace="{apps.namespace}",reason="Balanced",status="True",type="Balanced"'
    assert f'segue_app_condition{{app="wc",{said}}} 1.0' in metrics, metrics
    assert 'reason="TaskHandedOver",type="Normal"} ' in metrics, metrics
    # Deleting the app stops its loop (Kopf's finalizer comes off) and the garbage
    # collector removes what it owned: pods, the assignment, the workers' access.
    apps.custom.delete_namespaced_custom_object(GROUP, VERSION, apps.namespace, PLURAL, "wc")
    wait_for(
        "the app and its pods gone",
        lambda: not apps.pods("wc") and not apps.exists("wc") and not apps.configmaps("wc"),
        120,
        why,
    )
    gone = lambda: 'segue_app_condition{app="wc"' not in operator.metrics()  # noqa: E731
    wait_for("the app's state series gone", gone, 30, why)
    REPORT.append(
        f"2->4 balanced in {up:.1f}s, 4->2 in {down:.1f}s, {total} lines exact; "
        + handover_summary(metrics)
    )
    print(REPORT[-1])


def last_scale(apps: Apps, name: str) -> float | None:
    when = apps.status(name).last_scale_time
    return from_timestamp(when) if when else None


def assert_exact(kafka: Any, output: str, sent: dict[str, int]) -> None:
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 120)
    exact_counts(records, sent)


def handover_summary(metrics: str) -> str:
    """Count and mean of the operator's handover durations (publish -> running)."""
    values = {}
    for line in metrics.splitlines():
        if line.startswith("segue_operator_handover_duration_seconds_") and "{" in line:
            name = line.split("{", 1)[0].rsplit("_", 1)[1]
            values[name] = values.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    count = int(values.get("count", 0))
    mean = values.get("sum", 0.0) / count if count else 0.0
    return f"{count} handovers, mean {mean * 1000:.0f} ms publish-to-running"


def running(
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
    *,
    body: dict[str, Any],
    source: str,
    replicas: int,
    lines: int,
    rate: float,
    **producer_config: Any,
) -> tuple[Any, dict[str, int], Any]:
    """Create the app, wait until it is balanced, prefill ``lines`` of state, start
    steady input (``producer_config`` for its producer): (diagnose, lines sent so
    far, the running producer)."""
    apps.create(body)
    why = diagnose(apps, "wc", operator, pod_runner)
    wait_for(f"{replicas} pods balanced", lambda: apps.balanced("wc", replicas), 120, why)
    before = prefill(kafka, source, lines)
    producer = text_input(kafka.bootstrap_servers, source, 60, rate, **producer_config)
    producer.start()
    return why, before, producer


def prefill(kafka: Any, source: str, lines: int, words: int = 60) -> dict[str, int]:
    from tests.worker.harness import produce

    sent: dict[str, int] = {}
    records = []
    for i in range(lines):
        word = f"w{i % words}"
        sent[word] = sent.get(word, 0) + 1
        records.append((str(i), word))
    produce(kafka.bootstrap_servers, source, records)
    return sent


def merge(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def watch_faults(kafka: Any, apps: Apps, body: dict[str, Any], source: str) -> tuple[Any, Any]:
    """The fault suite's watchers (tests/faults/harness.py), started: every task's
    committed input offset (Progress) and the running owners of each task (Owners).
    Imported here, not at the top: the harness builds on this module."""
    from tests.faults.harness import Owners, Progress

    app_id = body["spec"]["applicationId"]
    progress = Progress(
        kafka.bootstrap_servers, app_id, [source, f"{app_id}-counts-store-repartition"]
    )
    owners = Owners(apps, "wc")
    progress.start()
    owners.start()
    return progress, owners


def test_operator_killed_mid_scale_up_resumes_and_completes(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    """Fault suite (issue 14): operator SIGKILL mid-generation. The workers go on
    without it: no task stands still for 15 s, none has two owners, counts exact."""
    body, source, output = wordcount(kafka, "wc", 2, env={"SEGUE_STANDBY_RESTORE_RATE": "300"})
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=6000,
        rate=100,
    )
    progress, owners = watch_faults(kafka, apps, body, source)
    try:
        time.sleep(3)
        apps.scale("wc", 4)
        wait_for("learners in flight", lambda: apps.learning("wc"), 60, why)
        operator.kill()  # mid-scale: learners restoring, nothing handed over yet
        time.sleep(2)
        operator.start()
        restarted = time.monotonic()
        took = wait_for("4 pods balanced", lambda: apps.balanced("wc", 4), 240, why)
        resumed = progress.wait_resumed(restarted, 15, why)
    finally:
        sent = merge(before, producer.stop())
        progress.stop()
        owners.stop()
    assert_exact(kafka, output, sent)
    owners.assert_one_owner()
    stall, where = progress.longest_stall()
    assert stall < 15, f"{where} committed nothing for {stall:.1f}s"
    assert (apps.status("wc").scaling or ScalingMemory()).joining == {}
    REPORT.append(
        f"operator killed mid scale-up: balanced {took:.1f}s after restart; every task "
        f"committing {resumed:.1f}s after it; longest stall {stall:.1f}s ({where}); "
        f"{sum(sent.values())} lines exact; owner overlaps "
        f"{[(o.task, round(o.seconds, 2)) for o in owners.overlaps]}"
    )
    print(REPORT[-1])


def test_a_learner_that_never_catches_up_hits_the_scale_down_timeout(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    """Fault suite (issue 14): the scale-down timeout path. Tasks move at the timeout
    anyway: every task commits again within 15 s of it, none has two owners, exact."""
    body, source, output = wordcount(
        kafka,
        "wc",
        3,
        env={"SEGUE_STANDBY_RESTORE_RATE": "1"},  # learners crawl: they never catch up
        scaleDownTimeoutSeconds=15,
        acceptableRecoveryLag=10,
    )
    why, before, producer = running(
        kafka,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=3,
        lines=3000,
        rate=100,
    )
    progress, owners = watch_faults(kafka, apps, body, source)
    try:
        time.sleep(3)
        started = time.monotonic()
        apps.scale("wc", 2)
        wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 180, why)
        took = time.monotonic() - started
        # The fault ends at the timeout, when the tasks are moved regardless.
        resumed = progress.wait_resumed(started + 15, 15, why)
    finally:
        sent = merge(before, producer.stop())
        progress.stop()
        owners.stop()
    assert took >= 15, f"balanced after {took:.1f}s: the timeout was not waited for"
    reasons = [reason for reason, _ in apps.events("wc")]
    assert "ScaleDownTimeout" in reasons, reasons
    assert_exact(kafka, output, sent)
    owners.assert_one_owner()
    stall, where = progress.longest_stall()
    assert stall < 15, f"{where} committed nothing for {stall:.1f}s"
    REPORT.append(
        f"forced scale-down 3->2: balanced in {took:.1f}s (timeout 15s); every task "
        f"committing {resumed:.1f}s after the timeout; longest stall {stall:.1f}s ({where}); "
        f"{sum(sent.values())} lines exact; owner overlaps "
        f"{[(o.task, round(o.seconds, 2)) for o in owners.overlaps]}"
    )
    print(REPORT[-1])
