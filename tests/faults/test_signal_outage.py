"""No decision on missing data (issue 26): an HPA holds a StreamApp through a broker
outage.

Tally runs under the real HPA controller (the operator serving the external metrics API
through the aggregation layer, as in tests/operator/test_e2e_hpa.py) on a broker of the
test's own, with input that needs more than ``MIN`` pods. The broker then dies for
``DOWNTIME`` s. While it is down the operator cannot read the input's offsets: its
metrics API must answer an error naming why, never the last value and never 0, and the
HPA must not scale the app down. Once the broker is back the value is served again and
every count is exact.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from kubernetes import client

from segue.operator.reconcile import regaining
from segue.stack.apps import Apps, keyed_input
from tests.metricsapi.aggregation import metric_path, through_apiserver
from tests.operator.e2e import OperatorProcess, wait_for
from tests.operator.test_e2e_hpa import (
    METRIC,
    MIN,
    WINDOW,
    hpa,
    hpa_why,
    replicas,
    serving_operator,
    tally,
)
from tests.operator.test_e2e_scaling import diagnose
from tests.worker.harness import read_committed
from tests.worker.scenarios import check_exact

from .evidence import shortfall, skipped_markers

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
__all__ = ["serving_operator"]  # the fixture, shared with tests/operator/test_e2e_hpa.py
RATE = 400.0  # records/s: needs 2 of Tally's pods at test_e2e_hpa's COST_MS
DOWNTIME = 30.0  # six HPA syncs (5 s on the local stack)


def settled(scaler: Any, namespace: str, apps: Apps, value: Callable[[], float | None]) -> bool:
    """The HPA at the count it wants, the app balanced there, and the metric's own
    recommendation that count too (the HPA's rule: ceil(value / target 1), or within its
    10% tolerance): otherwise a scale-down still due on the last value read before the
    outage lands in it (seen in CI: 4 -> 3 on 1.985, read just before the broker died)."""
    status = scaler.read_namespaced_horizontal_pod_autoscaler("wc", namespace).status
    active = {(c.type, c.status) for c in (status.conditions or [])} if status else set()
    count = replicas(apps, "wc")
    wanted = value()
    return (
        ("ScalingActive", "True") in active
        and status.desired_replicas == count
        and wanted is not None
        and (math.ceil(wanted) == count or abs(wanted / count - 1) <= 0.1)
        and apps.balanced("wc", count)
    )


def metric_value(kube: Any, path: str) -> float | None:
    """The external metric's value as served now (a Kubernetes quantity), if served."""
    return served_value(*through_apiserver(kube, path))


def served_value(code: int, body: Any) -> float | None:
    if code != 200 or not isinstance(body, dict) or not body.get("items"):
        return None
    text = str(body["items"][0]["value"])
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


class Look(NamedTuple):
    """One look during the outage."""

    at: float  # seconds into it
    replicas: int
    code: int  # the metric's HTTP status through the API server
    body: str
    scaling: str  # the HPA's ScalingActive condition: "status reason"
    replicated: str  # the StreamApp's KafkaReplicated condition: "status reason"


def broker_outage(broker: Any, look: Callable[[float], Look]) -> list[Look]:
    """``broker`` down for ``DOWNTIME`` s, looking every second. SIGKILL, not a
    controlled shutdown, which can leave a transaction hanging on a single broker
    (docs/reliability.md); started again whatever happens."""
    broker.crash()
    seen: list[Look] = []
    began = time.monotonic()
    try:
        while time.monotonic() - began < DOWNTIME:
            seen.append(look(time.monotonic() - began))
            time.sleep(1.0)
    finally:
        broker.start()
    return seen


def served_again(kube: Any, path: str, why: Any) -> tuple[float, float, set[str]]:
    """Wait for the metric to be served again: how long it took, the first value, and
    what it answered until then."""
    first: list[float] = []
    said: set[str] = set()

    def served() -> bool:
        code, body = through_apiserver(kube, path)
        value = served_value(code, body)
        if value is None:
            said.add(str(body))
        else:
            first.append(value)
        return bool(first)

    back = wait_for("the metric served again", served, 120, why)
    return back, first[0], said


def scaling_active(scaler: Any, namespace: str) -> str:
    status = scaler.read_namespaced_horizontal_pod_autoscaler("wc", namespace).status
    found = [c for c in (status.conditions or []) if c.type == "ScalingActive"]
    return f"{found[0].status} {found[0].reason}" if found else "none"


def test_an_hpa_never_scales_down_on_a_signal_kafka_could_not_give(
    kube: Any,
    kube_api: Any,
    broker: Any,
    serving_operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    operator = serving_operator
    namespace = operator.namespace
    apps = Apps(kube_api, namespace)
    scaler = client.AutoscalingV2Api(kube_api)
    source, output = tally(apps, broker.bootstrap_servers, 2)
    path = metric_path(namespace, METRIC, "wc")
    why = hpa_why(kube, scaler, namespace, "wc", diagnose(apps, "wc", operator, pod_runner))

    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    producer = keyed_input(broker.bootstrap_servers, source, keys=60, rate=RATE, exactly_once=True)
    producer.start()
    try:
        wait_for("the metric served", lambda: through_apiserver(kube, path)[0] == 200, 60, why)
        scaler.create_namespaced_horizontal_pod_autoscaler(namespace, hpa("wc"))
        # the HPA acting on the metric, at the count it wants, the app balanced there
        current = lambda: metric_value(kube, path)  # noqa: E731
        wait_for("the HPA settled", lambda: settled(scaler, namespace, apps, current), 240, why)
        before = replicas(apps, "wc")
        assert before > MIN, why()

        def look(at: float) -> Look:
            code, body = through_apiserver(kube, path)
            count = replicas(apps, "wc")
            kafka = apps.condition("wc", "KafkaReplicated")
            said = f"{kafka.status} {kafka.reason}" if kafka else "none"
            return Look(at, count, code, str(body), scaling_active(scaler, namespace), said)

        seen = broker_outage(broker, look)
        unknown = [s for s in seen if s.code == 503 and "unknown: Kafka unavailable" in s.body]
        assert unknown, f"never said unknown while the broker was down: {seen}"
        served = [s for s in seen if s.code == 200 and s.at > unknown[0].at]
        assert not served, f"a value served again with the broker still down: {served}"
        assert min(s.replicas for s in seen) >= before, seen
        # nothing said of the replicas that the operator could not read
        assert "Unknown KafkaUnavailable" in {s.replicated for s in seen}, seen
        assert "True AllInSync" not in {s.replicated for s in seen if s.at > unknown[0].at}, seen
        # the HPA said why it held (its next sync after the broker is back clears it)
        assert "False FailedGetExternalMetric" in {s.scaling for s in seen}, seen

        back, first, said = served_again(kube, path, why)
        assert replicas(apps, "wc") >= before, why()
        # a rate over a whole window after the outage, not across it: the input's producer
        # stalled with the broker and catches up, so a window spanning the gap reads a
        # trickle (seen in CI: 0.108 served, the HPA scaling 4 -> 1), and it said so
        assert first >= before / 2, f"{first} served first after the outage\n{why()}"
        assert any(regaining(WINDOW) in body for body in said), said
    finally:
        sent = producer.stop()
    total = sum(sent.values())
    group = apps.get("wc")["spec"]["applicationId"]
    exact(broker, group, producer, source=source, output=output, why=why)
    print(
        f"broker down {DOWNTIME:.0f}s: unknown {unknown[0].at:.1f}s into it, replicas held at "
        f"{before}, the value served again {back:.1f}s after the broker ({first:.2f} first); "
        f"{total} records exact"
    )


def exact(broker: Any, group: str, producer: Any, *, source: str, output: str, why: Any) -> None:
    """Every key's committed counts exact: a short read says where each partition stood
    (the ends last: CI shows a failure's last lines, and ``why()`` is long); a failure
    after a broker skipped this run's transaction markers is Kafka's (xfail)."""
    sent = dict(producer.sent)
    total = sum(sent.values())
    try:
        try:
            done = lambda r: len(r) >= total  # noqa: E731
            records = read_committed(broker.bootstrap_servers, output, done, 180)
        except AssertionError as short:
            ends = shortfall(broker.bootstrap_servers, group, source, output)
            said = f"{short} of {total}"
            raise AssertionError(f"{said}\n{why()}\n{said}\n{ends}") from short
        check_exact(records, sent)
    except AssertionError:
        skipped = skipped_markers(broker, [f"{group}-", producer.transactional_id])
        if skipped:  # Kafka's, not Segue's: docs/reliability.md says how it was found
            pytest.xfail(f"Kafka skipped transaction markers after its restart: {skipped}")
        raise
