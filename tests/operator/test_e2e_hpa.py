"""The HPA path end to end: the real HPA controller of the local stack's
kube-controller-manager reads ``segue-replicas-needed`` from the
operator's external metrics API, through the real aggregation layer, and scales
WordCount through ``/scale``; the operator carries each change out through learners.
The app is Tally with a known cost per record (``cost_ms``: one pod processes at most
about 1000/cost_ms records/s), so a step of input needs a known number of pods: the step
scales it out, through learners; once input stops and the backlog is gone it scales
back in to ``minReplicas``; every count is exact.

The operator runs as a process serving the API on 127.0.0.1; an ExternalName Service
points the APIService at it (tests/metricsapi/aggregation.py). Its values come from the
``SignalBoard`` the reconcile steps fill (``reconciler.signals``).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from segue.stack.apps import Apps, keyed_input
from segue.stack.process import free_port
from tests.metricsapi.aggregation import metric_path, provider_certs, registered, through_apiserver
from tests.worker.harness import create_topics, read_committed
from tests.worker.scenarios import check_exact

from .e2e import OperatorProcess, streamapp, wait_for, worker_command
from .test_e2e_scaling import diagnose

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SERVICE = "segue-external-metrics"
METRIC = "segue-replicas-needed"  # the pods the input needs: an AverageValue of 1 each
CATCH_UP = 10  # drain a backlog within 10 s (the default, 300 s, is for production)
# Rates over 5 s: one HPA sync period of the local stack, as the default (15 s) is one of
# a cluster's; test_e2e_signal.py keeps the default.
WINDOW = 5
AUTOSCALING = {"catchUpSeconds": CATCH_UP, "windowSeconds": WINDOW}
COST_MS = "4"  # one pod: at most ~250 records/s
STEP_RATE = 600.0  # records/s: needs 3 pods
MIN, MAX = 1, 4


def hpa(name: str) -> dict[str, Any]:
    """What the chart's hpa template renders, with windows short enough for a test."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "segue.dev/v1alpha1",
                "kind": "StreamApp",
                "name": name,
            },
            "minReplicas": MIN,
            "maxReplicas": MAX,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {
                            "name": METRIC,
                            "selector": {"matchLabels": {"segue.dev/app": name}},
                        },
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    },
                }
            ],
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 3, "periodSeconds": 15}],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": 15,
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                },
            },
        },
    }


@contextlib.contextmanager
def serving(
    kube: Any, kube_api: Any, namespace: str, tmp_path: Path, *args: str
) -> Iterator[OperatorProcess]:
    """``segue operator ARGS`` serving the external metrics API, registered with the
    aggregation layer."""
    ca, serving = provider_certs(tmp_path / "pki", namespace, SERVICE)
    port = free_port()
    proc = OperatorProcess(
        kube.kubeconfig, namespace, tmp_path,
        "--bind-address", "127.0.0.1",
        "--external-metrics-port", str(port),
        "--tls-cert-file", str(serving.cert),
        "--tls-private-key-file", str(serving.key),
        *args,
    ).start()  # fmt: skip
    try:
        with registered(kube_api, namespace, SERVICE, port, ca.cert):
            yield proc
    finally:
        proc.stop()


@pytest.fixture
def serving_operator(
    kube: Any, kube_api: Any, namespace: str, tmp_path: Path, streamapp_crd: Any
) -> Iterator[OperatorProcess]:
    with serving(kube, kube_api, namespace, tmp_path) as proc:
        yield proc


def tally(apps: Apps, bootstrap: str, replicas: int) -> tuple[str, str]:
    """Tally (``COST_MS`` a record) as StreamApp ``wc``, draining a backlog within
    ``CATCH_UP`` s, its rates over ``WINDOW`` s: its input and output topics."""
    tag = uuid.uuid4().hex[:6]
    source, output = f"in-{tag}", f"out-{tag}"
    create_topics(bootstrap, {source: 6, output: 6})
    body = streamapp(
        "wc",
        application_id=f"tally-{tag}",
        bootstrap=bootstrap,
        command=worker_command(
            "segue.worker.apps.tally:topology", input=source, output=output, cost_ms=COST_MS
        ),
        replicas=replicas,
        scaling={"acceptableRecoveryLag": 50},
    )
    body["spec"]["autoscaling"] = AUTOSCALING
    apps.create(body)
    return source, output


def hpa_why(
    kube: Any, scaler: Any, namespace: str, app: str, base: Callable[[], str]
) -> Callable[[], str]:
    """What a failing wait shows: the HPA's status, the metric as it reads it, ``base``."""

    def why() -> str:
        found = scaler.list_namespaced_horizontal_pod_autoscaler(namespace).items
        status = found[0].status if found else "not created yet"
        code, value = through_apiserver(kube, metric_path(namespace, METRIC, app))
        return f"hpa: {status}\nmetric: {code} {value}\n{base()}"

    return why


def replicas(apps: Apps, name: str) -> int:
    return int(apps.get(name)["spec"]["replicas"])


def test_the_hpa_scales_out_on_a_step_and_back_in_when_input_stops(
    kube: Any,
    kube_api: Any,
    kafka: Any,
    serving_operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    namespace = serving_operator.namespace
    apps = Apps(kube_api, namespace)
    scaler = client.AutoscalingV2Api(kube_api)
    source, output = tally(apps, kafka.bootstrap_servers, MIN)
    why = hpa_why(kube, scaler, namespace, "wc", diagnose(apps, "wc", serving_operator, pod_runner))

    wait_for(f"{MIN} pod balanced", lambda: apps.balanced("wc", MIN), 120, why)
    wait_for(
        "the app's metric served",
        lambda: through_apiserver(kube, metric_path(namespace, METRIC, "wc"))[0] == 200,
        60,
        why,
    )
    scaler.create_namespaced_horizontal_pod_autoscaler(namespace, hpa("wc"))
    producer = keyed_input(kafka.bootstrap_servers, source, keys=60, rate=STEP_RATE)
    producer.start()  # the step
    try:
        out = wait_for("the HPA scaled out", lambda: replicas(apps, "wc") > MIN, 180, why)
        peak = replicas(apps, "wc")
        wait_for(
            f"{peak} pods balanced", lambda: apps.balanced("wc", replicas(apps, "wc")), 240, why
        )
        peak = replicas(apps, "wc")
    finally:
        sent = producer.stop()
    reasons = {reason for reason, _ in apps.events("wc")}
    assert {"LearnersAssigned", "TaskHandedOver"} <= reasons  # carried out through learners
    assert MIN < peak <= MAX
    back = wait_for(
        f"the HPA scaled back in to {MIN}, balanced",
        lambda: replicas(apps, "wc") == MIN and apps.balanced("wc", MIN),
        300,
        why,
    )
    status = scaler.read_namespaced_horizontal_pod_autoscaler("wc", namespace).status
    assert status.desired_replicas == MIN
    (current,) = status.current_metrics
    assert current.external.metric.name == METRIC
    assert "ScaleDownTimeout" not in {reason for reason, _ in apps.events("wc")}
    total = sum(sent.values())
    records = read_committed(kafka.bootstrap_servers, output, lambda r: len(r) >= total, 120)
    check_exact(records, sent)
    print(
        f"HPA: {MIN}->{peak} within {out:.1f}s of the step, back to {MIN} in {back:.1f}s, "
        f"{total} records exact"
    )
