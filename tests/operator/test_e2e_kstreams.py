"""``runtime: kafka-streams`` before the operator runs such apps (issue 25, in progress): the
app's plugin gets its channel (the group ConfigMap, a Role naming it), no pods are made
that the runtime could not answer the probes of, and the status says why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes import client

from segue.operator.reconcile import KAFKA_STREAMS_NOT_YET
from segue.stack.apps import Apps
from tests.operator.e2e import OperatorProcess, wait_for
from tests.operator.test_e2e_health import degraded


def test_a_kafka_streams_app_is_granted_its_channel_and_told_it_is_not_run_yet(
    kube_api: Any,
    namespace: str,
    apps: Apps,
    operator: OperatorProcess,
    manifest: Callable[..., dict[str, Any]],
) -> None:
    apps.create(manifest("ks", runtime="kafka-streams", replicas=2))
    why = lambda: f"{operator.logs()[-3000:]}\n{apps.get('ks').get('status')}"  # noqa: E731
    wait_for("Degraded: RuntimeNotSupported", lambda: degraded(apps, "ks") is not None, 60, why)
    assert degraded(apps, "ks") == ("RuntimeNotSupported", KAFKA_STREAMS_NOT_YET)
    assert ("RuntimeNotSupported", KAFKA_STREAMS_NOT_YET) in apps.events("ks")
    assert apps.pods("ks") == {}
    assert "ks-group" in apps.configmaps("ks")
    role = client.RbacAuthorizationV1Api(kube_api).read_namespaced_role("ks-worker", namespace)
    assert [r.resource_names for r in role.rules] == [["ks-assignment"], ["ks-group"]]
