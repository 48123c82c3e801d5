"""The HPA path for a ``runtime: kafka-streams`` app: the real HPA controller reads
``segue-replicas-needed`` for the example Kafka Streams WordCount (exactly-once v2) through
the aggregation layer and scales it through ``/scale``; the operator carries each change
out through learners (Kafka Streams standbys placed by Segue's plugin), as it does for
Segue's own worker (test_e2e_hpa.py). Each input line costs the app ``line.cost.ms``, so a
step of input needs a known number of pods: it scales out, and once input stops and the
backlog is gone it scales back in; every count is exact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from segue.stack.apps import Apps, text_input
from tests.metricsapi.aggregation import metric_path, through_apiserver
from tests.worker.harness import read_committed

from .e2e import OperatorProcess, wait_for
from .test_e2e_hpa import AUTOSCALING, MAX, METRIC, MIN, hpa, hpa_why, replicas, serving
from .test_e2e_kstreams import built, exact_string_counts, wordcount
from .test_e2e_scaling import diagnose

pytestmark = [pytest.mark.e2e, pytest.mark.kstreams, pytest.mark.timeout(900)]
__all__ = ["built"]  # the module-scoped Maven build, a fixture here too
COST_MS = "4"  # one stream thread: at most ~250 lines/s
STEP_RATE = 600.0  # lines/s: needs 3 pods (the HPA's MIN 1, MAX 4)


@pytest.fixture
def ks_serving_operator(  # noqa: PLR0917 (fixtures)
    kube: Any,
    kube_api: Any,
    namespace: str,
    tmp_path: Path,
    streamapp_crd: Any,
    built: tuple[Path, str],
) -> Iterator[OperatorProcess]:
    """The operator with the agent to inject, serving the external metrics API."""
    agent = ("--kstreams-agent-image", "segue:dev", "--kstreams-agent-jar", str(built[0]))
    with serving(kube, kube_api, namespace, tmp_path, *agent) as proc:
        yield proc


def test_the_hpa_scales_a_kafka_streams_app_out_on_a_step_and_back_in(  # noqa: PLR0917 (fixtures)
    kube: Any,
    kube_api: Any,
    kafka: Any,
    ks_serving_operator: OperatorProcess,
    pod_runner: Any,
    tmp_path: Path,
    built: tuple[Path, str],
) -> None:
    operator = ks_serving_operator
    namespace = operator.namespace
    apps = Apps(kube_api, namespace)
    scaler = client.AutoscalingV2Api(kube_api)
    body, source, output = wordcount(kafka, tmp_path, built[1], replicas=MIN, line_cost_ms=COST_MS)
    body["spec"]["autoscaling"] = AUTOSCALING
    apps.create(body)
    why = hpa_why(kube, scaler, namespace, "kwc", diagnose(apps, "kwc", operator, pod_runner))

    wait_for(f"{MIN} pod balanced", lambda: apps.balanced("kwc", MIN), 240, why)
    wait_for(
        "the app's metric served",
        lambda: through_apiserver(kube, metric_path(namespace, METRIC, "kwc"))[0] == 200,
        60,
        why,
    )
    scaler.create_namespaced_horizontal_pod_autoscaler(namespace, hpa("kwc"))
    producer = text_input(kafka.bootstrap_servers, source, 60, STEP_RATE)
    producer.start()  # the step
    try:
        out = wait_for("the HPA scaled out", lambda: replicas(apps, "kwc") > MIN, 180, why)
        wait_for(
            "balanced at the HPA's count",
            lambda: apps.balanced("kwc", replicas(apps, "kwc")),
            300,
            why,
        )
        peak = replicas(apps, "kwc")
    finally:
        sent = producer.stop()
    reasons = {reason for reason, _ in apps.events("kwc")}
    assert {"LearnersAssigned", "TaskHandedOver"} <= reasons, why()  # through learners
    assert MIN < peak <= MAX
    back = wait_for(
        f"the HPA scaled back in to {MIN}, balanced",
        lambda: replicas(apps, "kwc") == MIN and apps.balanced("kwc", MIN),
        300,
        why,
    )
    status = scaler.read_namespaced_horizontal_pod_autoscaler("kwc", namespace).status
    assert status.desired_replicas == MIN
    assert "ScaleDownTimeout" not in {reason for reason, _ in apps.events("kwc")}
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 180)
    exact_string_counts(records, sent)
    print(
        f"Kafka Streams HPA: {MIN}->{peak} within {out:.1f}s of the step, back to {MIN} "
        f"in {back:.1f}s, {total} lines exact"
    )
