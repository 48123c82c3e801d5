"""An authenticated, authorizing cluster, end to end. WordCount runs on a broker that
takes clients only over SASL_SSL (SCRAM-SHA-512, a certificate from the stack's own CA)
and decides every request by ACL, with two principals of their own: the app's (the
workers, from ``credentialsSecret``) and the operator's (``operatorCredentialsSecret``),
each granted exactly the list in docs/reliability.md ("On an authenticated cluster",
written as code in segue.stack.kafka_acls). It scales 2 -> 4 with every count exact, the
broker refuses what the ACLs do not grant, and neither password (recognisable
canaries) shows up anywhere Segue writes. A wrong password is said as ``Degraded``
naming the authentication failure within seconds; an ACL the app lacks is said too."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Producer

from segue.operator.act.history import HistoryProducer
from segue.operator.metrics import OperatorMetrics
from segue.protocol.history import HistoryRecord
from segue.stack import kafka_acls as acls
from segue.stack.apps import Apps
from segue.stack.kafka_secure import ScramLogin, SecureKafkaBroker
from tests.worker.harness import create_topics, read_committed

from .e2e import OperatorProcess, wait_for
from .test_e2e_scaling import assert_exact, merge, running, wordcount
from .test_e2e_secrets import carriers, dumped, everywhere, operator_logs, scrape_workers

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
APP_SECRET, OPERATOR_SECRET = "wc-kafka", "wc-kafka-operator"
REPORT: list[str] = []


def canary() -> str:
    return f"segue-canary-{uuid.uuid4().hex}"


def secured(
    broker: SecureKafkaBroker,
    apps: Apps,
    replicas: int,
    *,
    app_password: str | None = None,
    operator_password: str | None = None,
    transactions: bool = True,
) -> tuple[dict[str, Any], str, str, ScramLogin, ScramLogin]:
    """WordCount on the SASL_SSL listener: two SCRAM users with their ACLs, their
    credentials in two Secrets (``*_password``: the Secret says that one instead);
    (body, source, output, app login, operator login). The harness's own topics,
    input and output go through the PLAINTEXT listener."""
    body, source, output = wordcount(broker, "wc", replicas)
    app_id, tag = body["spec"]["applicationId"], uuid.uuid4().hex[:6]
    app = broker.add_user(f"{app_id}-app", canary())
    own = broker.add_user(f"segue-operator-{tag}", canary())
    grants = acls.app_grants(app_id, [source], [output], transactions=transactions)
    acls.grant(broker.bootstrap_servers, app.principal, grants)
    acls.grant(
        broker.bootstrap_servers, own.principal, acls.operator_grants(app_id, [source], [output])
    )
    for name, login, password in (
        (APP_SECRET, app, app_password),
        (OPERATOR_SECRET, own, operator_password),
    ):
        settings = login.settings(password)
        del settings["bootstrap.servers"]  # the StreamApp's spec says that
        apps.core.create_namespaced_secret(
            apps.namespace, {"metadata": {"name": name}, "stringData": settings}
        )
    body["spec"]["kafka"] = {
        "bootstrapServers": broker.secure_bootstrap,
        "credentialsSecret": {"name": APP_SECRET},
        "operatorCredentialsSecret": {"name": OPERATOR_SECRET},
    }
    return body, source, output, app, own


def refused_write(login: ScramLogin, topic: str) -> str:
    """Kafka's answer to ``login`` writing one record to ``topic`` ("" if it took it)."""
    said: list[str] = []
    producer = Producer({**login.settings(), "message.timeout.ms": 10000})
    producer.produce(topic, b"x", on_delivery=lambda err, _: said.append(err.str() if err else ""))
    producer.flush(15)
    return said[0] if said else "no answer"


def test_wordcount_scales_with_two_principals_through_sasl_ssl_and_acls(
    kafka_secure: SecureKafkaBroker, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, source, output, app, own = secured(kafka_secure, apps, 2)
    why, before, producer = running(
        kafka_secure,
        apps,
        operator,
        pod_runner,
        body=body,
        source=source,
        replicas=2,
        lines=1000,
        rate=100,
    )
    try:
        apps.scale("wc", 4)
        took = wait_for("4 pods balanced", lambda: apps.balanced("wc", 4), 180, why)
        worker_metrics = scrape_workers(apps)
        pods = apps.pods("wc")
    finally:
        sent = merge(before, producer.stop())
    assert_exact(kafka_secure, output, sent)

    # The workers get the app's Secret by reference, never the operator's.
    for name, pod in pods.items():
        refs = {
            e.value_from.secret_key_ref.name
            for e in pod.spec.containers[0].env
            if e.value_from is not None and e.value_from.secret_key_ref is not None
        }
        assert refs == {APP_SECRET}, (name, refs)
    # The ACLs are enforced, so the run above proves they are enough: the app may not
    # write its own input, the operator may not write the app's output.
    assert "authorization failed" in refused_write(app, source).lower()
    assert "authorization failed" in refused_write(own, output).lower()
    # Neither password is anywhere Segue writes; the control finds each in its Secret.
    texts = everywhere(apps, operator, pod_runner, worker_metrics)
    assert len([n for n in texts if n.startswith("worker /metrics")]) == 4
    for login, secret in ((app, APP_SECRET), (own, OPERATOR_SECRET)):
        assert carriers(login.password, texts) == [], login.username
        stored = dumped(
            apps.core.api_client, apps.core.read_namespaced_secret(secret, apps.namespace)
        )
        assert carriers(login.password, {**texts, "secret": stored}) == ["secret"]
    REPORT.append(
        f"SASL_SSL + ACLs: 2->4 balanced in {took:.1f}s, {sum(sent.values())} lines exact"
    )
    print(REPORT[-1])


# The operator's principal refused: Degraded KafkaUnavailable with Kafka's reason. The
# app's: its workers cannot read the topics to apply the generation and report its tasks
# StartFailed with the refused login their admin client saw (worker/kafka.py Admin.why).
@pytest.mark.parametrize("whose", ["operator", "app"])
def test_a_wrong_password_is_degraded_within_seconds(
    whose: str,
    kafka_secure: SecureKafkaBroker,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
) -> None:
    wrong = f"segue-wrong-{uuid.uuid4().hex}"
    body, _, _, app, own = secured(kafka_secure, apps, 2, **{f"{whose}_password": wrong})
    created = time.monotonic()
    apps.create(body)

    def degraded() -> Any:
        try:
            found = apps.condition("wc", "Degraded")
        except Exception:  # no status yet
            return None
        return found if found is not None and found.status == "True" else None

    why = lambda: f"{apps.status('wc')}\n{operator.logs()[-3000:]}"  # noqa: E731
    wait_for("Degraded", lambda: degraded() is not None, 30, why)
    seconds = time.monotonic() - created
    condition = degraded()
    REPORT.append(
        f"wrong {whose} password -> Degraded {condition.reason} in {seconds:.1f}s: "
        f"{condition.message}"
    )
    print(REPORT[-1])
    assert "authentication failed" in condition.message.lower(), condition
    assert seconds < 30, REPORT[-1]
    texts = {**operator_logs(operator), "streamapp": str(apps.get("wc"))}
    for event in apps.core.list_namespaced_event(apps.namespace).items:
        texts[f"event {event.metadata.name}"] = dumped(apps.core.api_client, event)
    for password in (wrong, app.password, own.password):
        assert carriers(password, texts) == []


def test_a_missing_acl_is_said_not_waited_on(
    kafka_secure: SecureKafkaBroker, apps: Apps, operator: OperatorProcess, pod_runner: Any
) -> None:
    body, _, _, app, _ = secured(kafka_secure, apps, 2, transactions=False)
    created = time.monotonic()
    apps.create(body)
    why = lambda: f"{apps.status('wc')}\n{operator.logs()[-3000:]}"  # noqa: E731

    def said() -> Any:
        found = apps.condition("wc", "Degraded")
        return found if found is not None and found.status == "True" else None

    wait_for("Degraded", lambda: said() is not None, 120, why)
    condition = said()
    REPORT.append(
        f"no transactional-id ACL -> Degraded {condition.reason} after "
        f"{time.monotonic() - created:.1f}s: {condition.message}"
    )
    print(REPORT[-1])
    assert "transactional id authorization failed" in condition.message.lower(), condition
    # Granted, the workers' retries start the tasks, with nobody touching the app.
    app_id = body["spec"]["applicationId"]
    txn_ids = [g for g in acls.app_grants(app_id, [], []) if g[0] == acls.TXN]
    acls.grant(kafka_secure.bootstrap_servers, app.principal, txn_ids)
    wait_for("2 pods balanced", lambda: apps.balanced("wc", 2), 120, why)
    wait_for("Degraded cleared", lambda: said() is None, 60, why)


def test_the_history_topic_needs_only_the_operator_grants(kafka_secure: SecureKafkaBroker) -> None:
    """The operator's history producer (idempotent) writes through the SASL_SSL listener
    with the history grants of docs/reliability.md and nothing else; a principal without
    them is refused, counted, and the step goes on (``send`` never raises)."""
    tag = uuid.uuid4().hex[:6]
    topic, app_id = f"segue-history-{tag}", f"hist-{tag}"
    create_topics(kafka_secure.bootstrap_servers, {topic: 1})
    granted = kafka_secure.add_user(f"segue-operator-{tag}", canary())
    bare = kafka_secure.add_user(f"segue-bare-{tag}", canary())
    grants = acls.operator_grants(app_id, [], [], history_topic=topic)
    acls.grant(kafka_secure.bootstrap_servers, granted.principal, grants)
    rows = [
        HistoryRecord(namespace="ns", app=app_id, time=1000.0 + i, spec_replicas=2, generation=i)
        for i in range(3)
    ]
    metrics = OperatorMetrics()
    history = HistoryProducer(topic, metrics, timeout=10.0)

    def send_all(login: ScramLogin) -> None:
        settings = login.settings()
        bootstrap = settings.pop("bootstrap.servers")
        for row in rows:
            history.send(bootstrap, settings, row)

    send_all(granted)
    assert history.flush(30) == 0
    back = read_committed(kafka_secure.bootstrap_servers, topic, lambda r: len(r) >= 3, 60)
    assert [HistoryRecord.model_validate_json(v) for _, _, _, v in sorted(back)] == rows

    def failures() -> float:
        labels = {"namespace": "ns", "app": app_id}
        return (
            metrics.registry.get_sample_value("segue_operator_history_failures_total", labels) or 0
        )

    send_all(bare)
    deadline = time.monotonic() + 60
    while failures() < 1:  # refused: each row counted, by its delivery or its send
        assert time.monotonic() < deadline, "the bare principal's rows were never refused"
        history.flush(1)
        send_all(bare)
