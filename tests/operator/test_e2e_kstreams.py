"""``runtime: kafka-streams`` end to end: an unmodified Kafka Streams WordCount
(``examples/kafka-streams``, exactly-once v2) under the operator on the local stack, its
pods built from the user's command with Segue's agent injected by an init container, every
placement Segue's through the plugin (docs/kafka-streams.md). Scaling 2 -> 3 warms the
new pod's tasks up as learners (Kafka Streams standbys) and hands them over; every count is
exact; the status, events and the group's ConfigMaps say what happened.

Without an agent image the operator runs no Kafka Streams pods and says why."""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from segue.operator.kstreams.answer import SETTLED_PROBE
from segue.operator.reconcile import NO_AGENT
from segue.operator.scaling.group_wait import GROUP_WAITING
from segue.protocol.kstreams import (
    CLIENT_SUPPLIER_CLASS,
    TASK_ASSIGNOR_CLASS,
    decode_applied,
    decode_report_configmap,
)
from segue.stack.apps import Apps, text_input
from tests.kstreams import app as kstreams_app
from tests.operator.test_e2e_health import degraded
from tests.worker.harness import create_topics, read_committed

from .e2e import OperatorProcess, exact_counts, streamapp, wait_event, wait_for
from .test_e2e_scaling import diagnose, merge, prefill

pytestmark = [pytest.mark.e2e, pytest.mark.kstreams, pytest.mark.timeout(900)]
PARTITIONS = 6
PREFILL = 3000  # lines of state written before the steady input starts
# The JVM settings docs/kafka-streams.md suggests for a node with few cores, as a user sets
# them (the pod template's env): each new pod's JVM starts on less CPU on this 2-core host
SMALL_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# A handover of a scale is taken up within this (a bucket of the operator's histogram):
# the settled follow-up plus the rebalances and the new owner's start. Seen: a scale-down
# requested 1.1 s after a settled answer, its six handovers applied 14.1 s later
SCALE_BOUND = 30.0
assert SETTLED_PROBE + 10.0 <= SCALE_BOUND


def test_without_an_agent_image_no_kafka_streams_pod_is_made_and_the_status_says_why(
    apps: Apps, operator: OperatorProcess, manifest: Callable[..., dict[str, Any]]
) -> None:
    apps.create(manifest("ks", runtime="kafka-streams", replicas=2))
    why = lambda: f"{operator.logs()[-3000:]}\n{apps.get('ks').get('status')}"  # noqa: E731
    wait_for("Degraded: AgentNotConfigured", lambda: degraded(apps, "ks") is not None, 60, why)
    assert degraded(apps, "ks") == ("AgentNotConfigured", NO_AGENT)
    wait_event(apps, "ks", "AgentNotConfigured", NO_AGENT)
    assert apps.pods("ks") == {}


@pytest.fixture(scope="module")
def built() -> tuple[Path, str]:
    """(the agent jar, the example's class path), built once with Maven."""
    return kstreams_app.build()


@pytest.fixture
def ks_operator(
    kube: Any, namespace: str, tmp_path: Path, streamapp_crd: Any, built: tuple[Path, str]
) -> Iterator[OperatorProcess]:
    """The operator with an agent to inject: under the pod runner the init container's
    ``cp`` runs on this machine, so the jar's path is where Maven built it."""
    jar, _ = built
    args = ("--kstreams-agent-image", "segue:dev", "--kstreams-agent-jar", str(jar))
    proc = OperatorProcess(kube.kubeconfig, namespace, tmp_path, *args).start()
    yield proc
    proc.stop()


def wordcount(
    kafka: Any,
    tmp_path: Path,
    classpath: str,
    *,
    replicas: int = 2,
    session_timeout_ms: int | None = 10000,
    java_options: str = "",
    **extra: str,
) -> tuple[dict[str, Any], str, str]:
    """The example app's StreamApp (its ``streams.properties`` plus ``extra`` entries,
    dots spelt as underscores), its input and output topics. ``session_timeout_ms``:
    within it a killed instance leaves the group; None leaves Kafka's default (45 s).
    ``java_options``: the template's ``JAVA_TOOL_OPTIONS``, which the operator keeps
    behind its agent; empty leaves the JVM's defaults."""
    tag = uuid.uuid4().hex[:6]
    app_id, source, output = f"kwc-{tag}", f"text-{tag}", f"counts-{tag}"
    create_topics(kafka.bootstrap_servers, {source: PARTITIONS, output: PARTITIONS})
    properties = tmp_path / "streams.properties"
    properties.write_text(
        "\n".join(
            [
                f"application.id={app_id}",
                f"bootstrap.servers={kafka.bootstrap_servers}",
                # the pod's state volume, wherever the pod runner shows it
                "config.providers=env",
                "config.providers.env.class="
                "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                "state.dir=${env:SEGUE_STATE_DIR}",
                "processing.guarantee=exactly_once_v2",
                "commit.interval.ms=100",
                "statestore.cache.max.bytes=0",  # every count is written: 1..n per word
                "replication.factor=1",
                "num.standby.replicas=0",
                *([f"session.timeout.ms={session_timeout_ms}"] if session_timeout_ms else []),
                f"task.assignor.class={TASK_ASSIGNOR_CLASS}",
                # the group rebalances when the operator asks (docs/kafka-streams.md)
                f"default.client.supplier={CLIENT_SUPPLIER_CLASS}",
                f"input.topic={source}",
                f"output.topic={output}",
                *(f"{key.replace('_', '.')}={value}" for key, value in extra.items()),
            ]
        )
        + "\n"
    )
    body = streamapp(
        "kwc",
        application_id=app_id,
        bootstrap=kafka.bootstrap_servers,
        command=["java", "-cp", classpath, "example.WordCount", str(properties)],
        replicas=replicas,
        scaling={"acceptableRecoveryLag": 100},
    )
    body["spec"]["runtime"] = "kafka-streams"
    env = [{"name": "JAVA_TOOL_OPTIONS", "value": java_options}] if java_options else []
    body["spec"]["template"]["env"] = env
    return body, source, output


def counted(operator: OperatorProcess, what: str = "rebalances") -> int:
    """The operator's count so far of the group's rebalances (new reports) or, with
    ``rejoin_asks``, of its asks for one."""
    found = re.search(
        rf"^segue_operator_kstreams_{what}_total\{{[^}}]*\}} (\S+)$", operator.metrics(), re.M
    )
    return int(float(found.group(1))) if found else 0


@pytest.fixture
def kwc(  # noqa: PLR0917 (fixtures)
    kafka: Any,
    apps: Apps,
    ks_operator: OperatorProcess,
    pod_runner: Any,
    tmp_path: Path,
    built: tuple[Path, str],
) -> tuple[Callable[[], str], str, str]:
    """The app created and balanced on 2 pods: (diagnose, input topic, output topic)."""
    body, source, output = wordcount(kafka, tmp_path, built[1], java_options=SMALL_JVM)
    apps.create(body)
    why = diagnose(apps, "kwc", ks_operator, pod_runner)
    wait_for("2 pods balanced", lambda: apps.balanced("kwc", 2), 240, why)
    return why, source, output


def counting(kafka: Any, output: str) -> None:
    """Wait until the app has committed as many counts as lines were prefilled (one count
    a line): it holds their state when it is scaled."""
    read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= PREFILL, 120)


def exact_string_counts(records: list[Any], sent: dict[str, int]) -> None:
    """Kafka Streams' WordCount writes counts as text (its record cache is off: every count
    is written, so under exactly-once each word's are exactly 1..n)."""
    exact_counts(records, sent, lambda value: int(value.decode()))


REPORT: list[str] = []


def scale(
    apps: Apps, operator: OperatorProcess, replicas: int, why: Callable[[], str]
) -> tuple[float, int]:
    """Scale through /scale and wait until balanced with exactly ``replicas`` pods: the
    seconds it took and the group's rebalances meanwhile."""
    before = counted(operator)
    apps.scale("kwc", replicas)
    took = wait_for(f"{replicas} pods balanced", lambda: apps.balanced("kwc", replicas), 300, why)
    return took, counted(operator) - before


def test_a_kafka_streams_app_scales_2_3_6_3_survives_a_killed_pod_and_counts_exactly(  # noqa: PLR0917 (fixtures)
    kafka: Any,
    kube_api: Any,
    namespace: str,
    apps: Apps,
    ks_operator: OperatorProcess,
    kwc: tuple[Callable[[], str], str, str],
) -> None:
    why, source, output = kwc
    pod = apps.pods("kwc")["kwc-0"]
    assert [c.name for c in pod.spec.init_containers] == ["segue-agent"]
    role = client.RbacAuthorizationV1Api(kube_api).read_namespaced_role("kwc-worker", namespace)
    assert [r.resource_names for r in role.rules] == [["kwc-assignment"], ["kwc-group"]]

    before = prefill(kafka, source, PREFILL)
    producer = text_input(kafka.bootstrap_servers, source, 60, 100)
    producer.start()
    steps: list[str] = []
    try:
        counting(kafka, output)
        for replicas in (3, 6, 3):
            took, count = scale(apps, ks_operator, replicas, why)
            steps.append(f"->{replicas} {took:.1f}s/{count} rebalances")
        scaled = handovers(ks_operator, SCALE_BOUND)
        core = client.CoreV1Api(kube_api)

        def group() -> tuple[Any, Any]:
            cm = core.read_namespaced_config_map("kwc-group", namespace)
            return decode_report_configmap(cm.binary_data), decode_applied(cm.data)

        def answered(clients: int, after: str | None = None) -> bool:
            """The group's latest rebalance has ``clients`` clients and ran Segue's answer."""
            report, applied = group()
            return (
                report is not None
                and len(report.clients) == clients
                and report.id != after
                and applied is not None
                and applied.report == report.id
                and applied.generation is not None
            )

        wait_for("the group of 3 running Segue's answer", lambda: answered(3), 60, why)
        before_kill = group()[0].id
        # A killed instance: its container restarts and rejoins; Segue answers again
        status = apps.pods("kwc")["kwc-1"].status.container_statuses[0]
        os.killpg(int(status.container_id.removeprefix("segue://")), signal.SIGKILL)
        killed = time.monotonic()
        wait_for("the status saying the group waits", lambda: waits_for(apps, "kwc-1"), 10, why)
        wait_for("kwc-1 restarted", lambda: restarts(apps, "kwc-1") >= 1, 60, why)
        wait_for("a rebalance Segue answered", lambda: answered(3, before_kill), 120, why)
        wait_for("3 pods balanced", lambda: apps.balanced("kwc", 3), 300, why)
        steps.append(f"killed kwc-1: balanced again {time.monotonic() - killed:.1f}s later")
        # The autoscaling signal reads a Kafka Streams app too: its input committed
        wait_for("a processing rate", lambda: autoscaling(ks_operator, "processed") > 0, 60, why)
        wait_for("3 active members", lambda: autoscaling(ks_operator, "active") == 3, 60, why)
    finally:
        sent = merge(before, producer.stop())
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 180)
    exact_string_counts(records, sent)

    reasons = {reason for reason, _ in apps.events("kwc")}
    wanted = {"ScalingUp", "LearnersAssigned", "TaskHandedOver", "ScaleDownStarted", "MemberLeft"}
    assert wanted <= reasons, why()
    assert "ScaleDownTimeout" not in reasons
    count, within = handovers(ks_operator)
    assert scaled[0] > 0
    # generous: a handover of a scale applies at the next follow-up rebalance, 1 s apart
    # while busy; one decided while the group is settled at once (the app's second config
    # line, on the operator's ask), as docs/kafka-streams.md says
    assert scaled[1] == scaled[0], f"{scaled}: {ks_operator.metrics()}"
    # the killed pod's return: a rebalance can wait out the dead member's session (10 s)
    assert handovers(ks_operator, 30.0)[1] == count, ks_operator.metrics()
    steps.append(f"{within} of {count} handovers applied within 2 s of their publication")
    steps.append(f"{counted(ks_operator, 'rejoin_asks')} rebalances asked")
    REPORT.append("2" + ", ".join(steps))
    print(REPORT[-1])


def waits_for(apps: Apps, pod: str) -> bool:
    """The status says the group waits after ``pod``'s instance was killed: its member
    until its session ends (no running pod claims it), or the rebalance its return
    started, and does not call the app balanced meanwhile."""
    scaling, balanced = apps.condition("kwc", "Scaling"), apps.condition("kwc", "Balanced")
    said = scaling.message if scaling is not None else ""
    return (
        scaling is not None
        and scaling.status == "True"
        and (f"(pod {pod})" in said or "the group has been in a rebalance" in said)
        and (scaling.reason == GROUP_WAITING or "; the group " in said)
        and balanced is not None
        and balanced.status == "False"
    )


def autoscaling(operator: OperatorProcess, which: str) -> float:
    name = {
        "processed": "segue_app_processed_records_per_second",
        "active": "segue_app_active_members",
    }[which]
    found = re.search(rf"^{name}\{{[^}}]*app=\"kwc\"[^}}]*\}} (\S+)$", operator.metrics(), re.M)
    return float(found.group(1)) if found else 0.0


def handovers(operator: OperatorProcess, within: float = 2.0) -> tuple[int, int]:
    """(handovers published, those applied within ``within`` seconds): the operator's
    histogram, from publishing a handover to the group running the generation."""
    text = operator.metrics()
    name = "segue_operator_handover_duration_seconds"
    count = re.search(rf"^{name}_count\{{[^}}]*app=\"kwc\"[^}}]*\}} (\S+)$", text, re.M)
    bucket = re.search(
        rf"^{name}_bucket\{{[^}}]*app=\"kwc\"[^}}]*le=\"{within}\"[^}}]*\}} (\S+)$", text, re.M
    )
    return (
        int(float(count.group(1))) if count else 0,
        int(float(bucket.group(1))) if bucket else 0,
    )


def restarts(apps: Apps, pod: str) -> int:
    statuses = apps.pods("kwc")[pod].status.container_statuses or []
    return sum(c.restart_count or 0 for c in statuses)


def test_the_app_keeps_counting_while_the_operator_is_gone_and_segue_takes_over_again(  # noqa: PLR0917 (fixtures)
    kafka: Any,
    kube_api: Any,
    namespace: str,
    apps: Apps,
    ks_operator: OperatorProcess,
    kwc: tuple[Callable[[], str], str, str],
) -> None:
    why, source, output = kwc
    core = client.CoreV1Api(kube_api)

    def applied() -> Any:
        return decode_applied(core.read_namespaced_config_map("kwc-group", namespace).data)

    before = prefill(kafka, source, PREFILL)
    producer = text_input(kafka.bootstrap_servers, source, 60, 100)
    producer.start()
    try:
        counting(kafka, output)
        apps.scale("kwc", 3)
        # kwc-1's learners of the start are LearnersAssigned too: the new pod's are wanted
        wait_for(
            "learners on kwc-2",
            lambda: any(
                r == "LearnersAssigned" and "kwc-2 learns" in m for r, m in apps.events("kwc")
            ),
            120,
            why,
        )
        ks_operator.kill()
        killed = time.monotonic()
        # the next rebalance finds nobody to answer: Kafka Streams' own assignor places
        fell_back = wait_for(
            "a fallback", lambda: applied() is not None and applied().fallback is not None, 60, why
        )
        seen = len(read_committed(kafka.bootstrap_servers, output, lambda r: len(r) > 0, 60))
        later = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) > seen, 60)
        assert len(later) > seen  # still counting without Segue
        ks_operator.start()
        back = wait_for("3 pods balanced", lambda: apps.balanced("kwc", 3), 300, why)
        outcome = applied()
        assert outcome is not None
        assert outcome.generation is not None, outcome  # Segue answers again
    finally:
        sent = merge(before, producer.stop())
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 180)
    exact_string_counts(records, sent)
    assert "AssignorFallback" in {r for r, _ in apps.events("kwc")}, why()
    REPORT.append(
        f"operator killed mid-scale: fallback {fell_back:.1f}s after the kill, "
        f"balanced {back:.1f}s after it came back ({time.monotonic() - killed:.0f}s in all)"
    )
    print(REPORT[-1])
