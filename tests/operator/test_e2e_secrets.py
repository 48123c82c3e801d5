"""Secrets stay secret, end to end. WordCount runs against the broker's SASL listener,
so the operator and every worker must really log in with the password of the
credentials Secret; then that password (recognisable: ``segue-canary-<hex>``, drawn
per session) is searched for everywhere Segue writes, and found only in the Secret.
The worker pods run with the hardened defaults and leave their root filesystem and
HOME untouched. A wrong password is refused by Kafka and said in the app's status, an
event and the operator's log, without either password in it; once the Secret is
fixed, the app starts by itself."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from segue.protocol import decode_configmap
from segue.protocol.names import assignment_configmap, kafka_env_name
from segue.stack.apps import Apps
from segue.worker.cli import LOG_FORMAT_ENV
from tests.conftest import SaslLogin

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import assert_exact, merge, running, wordcount

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
SECRET = "wc-kafka"


def credentials(login: SaslLogin, password: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": login.username,
        "sasl.password": password,
    }


def sasl_app(
    kafka: Any,
    apps: Apps,
    login: SaslLogin,
    password: str,
    replicas: int,
    *,
    env: dict[str, str] | None = None,
) -> Any:
    """WordCount whose workers and operator reach Kafka only through the SASL listener,
    with credentials from a Secret; (body, source, output). Test input and output
    use the PLAINTEXT listener."""
    apps.core.create_namespaced_secret(
        apps.namespace,
        {"metadata": {"name": SECRET}, "stringData": credentials(login, password)},
    )
    body, source, output = wordcount(kafka, "wc", replicas, env=env)
    body["spec"]["kafka"] = {
        "bootstrapServers": login.bootstrap,
        "credentialsSecret": {"name": SECRET},
    }
    return body, source, output


def carriers(password: str, texts: dict[str, str]) -> list[str]:
    """The names of the texts that hold ``password``, as it is or base64-encoded (as a
    Secret's data, a ConfigMap's binaryData would carry it)."""
    forms = (password, base64.b64encode(password.encode()).decode())
    return sorted(name for name, text in texts.items() if any(f in text for f in forms))


def dumped(api: Any, obj: Any) -> str:
    return json.dumps(api.sanitize_for_serialization(obj))


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return str(reply.read().decode())


def everywhere(
    apps: Apps, operator: OperatorProcess, runner: Any, worker_metrics: dict[str, str]
) -> dict[str, str]:
    """Every place Segue writes to, as text: the operator's logs and metrics, each
    worker's log files and metrics, the namespace's Events, the StreamApp (spec and
    status), the assignment ConfigMap (and its decoded document) and the pods."""
    api, ns = apps.core.api_client, apps.namespace
    texts = operator_logs(operator)
    texts["operator /metrics"] = operator.metrics()
    for path in sorted((runner.root / "pods").glob(f"{ns}_*/logs/**/*.log")):
        texts[f"pod log {path.relative_to(runner.root)}"] = path.read_text(errors="replace")
    texts.update({f"worker /metrics {n}": page for n, page in worker_metrics.items()})
    for event in apps.core.list_namespaced_event(ns).items:
        texts[f"event {event.metadata.name}"] = dumped(api, event)
    texts["streamapp"] = json.dumps(apps.get("wc"))
    cm = apps.core.read_namespaced_config_map(assignment_configmap("wc"), ns)
    texts["assignment configmap"] = dumped(api, cm)
    texts["assignment document"] = decode_configmap(cm.data, cm.binary_data).model_dump_json()
    for pod in apps.core.list_namespaced_pod(ns).items:
        texts[f"pod {pod.metadata.name}"] = dumped(api, pod)
    return texts


def scrape_workers(apps: Apps) -> dict[str, str]:
    port = apps.get("wc")["spec"]["metricsPort"]
    return {
        name: get(f"http://{pod.status.pod_ip}:{port}/metrics")
        for name, pod in apps.pods("wc").items()
    }


def written(directory: Path) -> Iterator[str]:
    """Every file under ``directory``, not following symlinks (mounts are symlinks)."""
    for parent, dirs, files in os.walk(directory):
        for name in sorted(files + dirs):
            path = Path(parent) / name
            if not path.is_symlink() and not path.is_dir():
                yield str(path.relative_to(directory))


def operator_logs(operator: OperatorProcess) -> dict[str, str]:
    """The operator's log files, whole (``OperatorProcess.logs`` keeps only tails)."""
    return {
        f"operator log {p.name}": p.read_text(errors="replace")
        for p in sorted(operator.log_dir.glob("operator-*.log"))
    }


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_credentials_reach_kafka_by_reference_and_nowhere_else(  # noqa: PLR0917 (fixtures)
    log_format: str,
    kafka: Any,
    kafka_sasl: SaslLogin,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    """In both log formats: the JSON one (issue 27) carries the same messages as
    fields, and librdkafka's own lines through Python's logging."""
    canary = kafka_sasl.password
    if log_format == "json":  # the operator again, logging JSON; the workers told by env
        operator.stop()
        operator.extra = (*operator.extra, "--log-format", "json")
        operator.start()
    env = {LOG_FORMAT_ENV: log_format}
    body, source, output = sasl_app(kafka, apps, kafka_sasl, canary, replicas=2, env=env)
    # Balanced and counting exactly needs the operator's admin client and every
    # worker's clients logged in over SASL: the references work.
    why, before, producer = running(
        kafka, apps, operator, pod_runner, body=body, source=source, replicas=2, lines=600, rate=100
    )
    try:
        apps.scale("wc", 3)
        wait_for("3 pods balanced", lambda: apps.balanced("wc", 3), 180, why)
        worker_metrics = scrape_workers(apps)
        pods = apps.pods("wc")
        # Nothing written outside the state volume and /tmp: the root filesystem of
        # each worker (only mount symlinks under SEGUE_POD_ROOT) and HOME stay empty.
        for name, pod in pods.items():
            pod_dir = pod_runner.pod_dir(apps.namespace, name, pod.metadata.uid)
            assert list(written(pod_dir / "rootfs")) == [], name
            assert list(written(pod_dir / "home")) == [], name
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka, output, sent)

    for name, pod in pods.items():
        spec = pod.spec
        assert spec.security_context.run_as_non_root is True, name
        assert spec.security_context.run_as_user == 10001, name
        container = spec.containers[0]
        assert container.security_context.read_only_root_filesystem is True, name
        env = {e.name: e for e in container.env}
        for key in credentials(kafka_sasl, canary):
            ref = env[kafka_env_name(key)]
            assert ref.value is None, (name, key)
            assert ref.value_from.secret_key_ref.name == SECRET, (name, key)
            assert ref.value_from.secret_key_ref.key == key, (name, key)

    texts = everywhere(apps, operator, pod_runner, worker_metrics)
    assert any(n.startswith("pod log") for n in texts), sorted(texts)
    if log_format == "json":  # what was searched is the JSON form, every line of it
        json_operator = f"operator log {operator.name}-{operator.starts}.log"
        for name, text in texts.items():
            if name.startswith("pod log") or name == json_operator:
                assert_json_lines(name, text, worker=name.startswith("pod log"))
    assert len([n for n in texts if n.startswith("worker /metrics")]) == 3
    assert carriers(canary, texts) == []
    # The control: the scanner does find the password where it belongs, stored in the
    # Secret (base64) and read back from it (as is), so the search above can fail.
    secret = apps.core.read_namespaced_secret(SECRET, apps.namespace)
    controls = {
        "secret object": dumped(apps.core.api_client, secret),
        "secret value": base64.b64decode(secret.data["sasl.password"]).decode(),
    }
    assert carriers(canary, {**texts, **controls}) == ["secret object", "secret value"]


def assert_json_lines(name: str, text: str, worker: bool) -> None:
    """Every line an object; a worker's name its app and pod, and its task lines the task."""
    objects = []
    for line in text.splitlines():
        try:
            objects.append(json.loads(line))
        except ValueError as exc:
            raise AssertionError(f"{name}: not JSON: {line[:200]}") from exc
    assert objects, name
    if worker:
        assert all(o["app"].startswith("wc-") and o["pod"].startswith("wc-") for o in objects)
        assert any("task" in o for o in objects), name
        assert any("generation" in o for o in objects), name


def test_a_wrong_password_is_refused_and_said_without_the_password(
    kafka: Any, kafka_sasl: SaslLogin, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    wrong = f"segue-wrong-{kafka_sasl.password[-8:]}"
    body, _, _ = sasl_app(kafka, apps, kafka_sasl, wrong, replicas=2)
    apps.create(body)

    def failed_steps() -> float:
        try:
            page = operator.metrics()
        except OSError:  # its metrics server is not up yet
            return 0.0
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in page.splitlines()
            if line.startswith("segue_operator_reconcile_errors_total{")
            and 'stage="KafkaObserveError"' in line
        )

    # Kafka refuses the operator's admin client: its steps fail (counted), and its log
    # says why, in librdkafka's words.
    wait_for("a failed step", lambda: failed_steps() >= 1, 90, operator.logs)
    assert "SASL authentication error: Authentication failed" in operator.logs()
    # It decided nothing, so no pod runs on bad credentials.
    assert apps.pods("wc") == {}
    metrics = operator.metrics()
    logs = {**operator_logs(operator), "operator /metrics": metrics}
    logs["streamapp"] = json.dumps(apps.get("wc"))
    for event in apps.core.list_namespaced_event(apps.namespace).items:
        logs[f"event {event.metadata.name}"] = dumped(apps.core.api_client, event)
    assert carriers(wrong, logs) == []
    assert carriers(kafka_sasl.password, logs) == []
    # kubectl says it too: Degraded, with Kafka's reason and one Warning event.
    degraded = apps.condition("wc", "Degraded")
    assert degraded is not None
    assert (degraded.status, degraded.reason) == ("True", "KafkaUnavailable")
    assert "Authentication failed" in degraded.message
    assert len(apps.event_counts("wc").get("KafkaUnavailable", [])) == 1  # aggregated
    # The cause fixed, the app recovers with nobody touching it.
    apps.core.patch_namespaced_secret(
        SECRET, apps.namespace, {"stringData": credentials(kafka_sasl, kafka_sasl.password)}
    )
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, operator.logs)
    recovered = apps.condition("wc", "Degraded")
    assert recovered is None or recovered.status == "False"


def test_a_pod_template_can_replace_the_security_defaults(
    kafka: Any, apps: Apps, operator: OperatorProcess
) -> None:
    body, _, _ = wordcount(kafka, "wc", 1)
    body["spec"]["template"]["securityContext"] = {"readOnlyRootFilesystem": False}
    body["spec"]["template"]["podSecurityContext"] = {"runAsUser": 20002}
    apps.create(body)
    wait_for("a pod", lambda: bool(apps.pods("wc")), 60, operator.logs)
    pod = next(iter(apps.pods("wc").values()))
    assert pod.spec.security_context == client.V1PodSecurityContext(run_as_user=20002)
    assert pod.spec.containers[0].security_context == client.V1SecurityContext(
        read_only_root_filesystem=False
    )
