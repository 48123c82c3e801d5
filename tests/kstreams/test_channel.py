"""The plugin's channel for real: a Kafka Streams app (the example, with the agent) reports
its group into its own ConfigMap through the real API server with its pod's ServiceAccount
token and the Role the operator grants (``operator/act/access.py``), reads the answer
from its assignment ConfigMap and runs it; the token can read no other app's ConfigMap.

No operator runs here: the test answers each report itself, through the protocol's own
functions (``answer_for``, the document encoding), so what is tested is the channel, the
RBAC and the mapping inside a real Kafka Streams rebalance. The operator's side is
issue 25's next step (docs/kafka-streams.md, "Status")."""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from kubernetes import client

from segue.operator.act import access, apply, objects
from segue.protocol import AssignmentDocument, MemberRoles, encode
from segue.protocol.kstreams import (
    CLIENT_SUPPLIER_CLASS,
    TASK_ASSIGNOR_CLASS,
    Applied,
    GroupReport,
    answer_for,
    decode_applied,
    decode_report_configmap,
)
from segue.protocol.names import assignment_configmap, group_configmap
from segue.stack.apps import Apps
from segue.stack.process import free_port
from tests.kstreams import app
from tests.kstreams.test_plugin import LINES, counts, scrape
from tests.worker.harness import create_topics, produce

pytestmark = [pytest.mark.kstreams, pytest.mark.timeout(600)]

SA_DIR = "var/run/secrets/kubernetes.io/serviceaccount"
MEMBER = "wc-0"


def streamapp(apps: Apps, name: str, application: str, bootstrap: str) -> str:
    apps.create(
        {
            "apiVersion": "segue.dev/v1alpha1",
            "kind": "StreamApp",
            "metadata": {"name": name},
            "spec": {
                "applicationId": application,
                "runtime": "kafka-streams",
                "replicas": 0,  # nothing runs it but this test
                "kafka": {"bootstrapServers": bootstrap},
                "template": {"image": "example/wordcount:0.1.0"},
            },
        }
    )
    return str(apps.get(name)["metadata"]["uid"])


def pod_root(core: client.CoreV1Api, namespace: str, name: str, kube: Any, root: Path) -> Path:
    """The pod's files as the pod runner lays them out: the ServiceAccount's token and CA."""
    token = core.create_namespaced_service_account_token(
        f"{name}-worker",
        namespace,
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
        ),
    ).status.token
    sa = root / SA_DIR
    sa.mkdir(parents=True)
    (sa / "token").write_text(token)
    (sa / "ca.crt").write_bytes(Path(kube.ca_file).read_bytes())
    return root


def answer(report: GroupReport, consumers: list[str], generation: int) -> AssignmentDocument:
    """What an operator with one member would answer: every task active on it."""
    return AssignmentDocument(
        application_id=report.application_id,
        generation=generation,
        members={MEMBER: MemberRoles(active=tuple(t.id for t in report.tasks))},
        kafka_streams=answer_for(report, {MEMBER: consumers}),
    )


def grant(kube_api: Any, namespace: str, name: str, uid: str) -> None:
    """What the operator grants a ``runtime: kafka-streams`` app, with its own builders."""
    core, rbac = client.CoreV1Api(kube_api), client.RbacAuthorizationV1Api(kube_api)
    apply.ensure_worker_access(
        core,
        rbac,
        namespace,
        [
            access.service_account(name, uid),
            access.role(name, uid, "kafka-streams"),
            access.role_binding(name, uid, namespace),
            access.group(name, uid),
        ],
    )


def properties(
    path: Path, application: str, bootstrap: str, topics: tuple[str, str], static: bool = False
) -> Path:
    """The app's configuration; ``static``: with ``group.instance.id`` (static membership,
    whose member ids start with the instance id rather than the client id)."""
    path.write_text(
        ("group.instance.id=kwc-7\n" if static else "")
        + f"application.id={application}\nbootstrap.servers={bootstrap}\n"
        f"state.dir={path.parent / 'state'}\nprocessing.guarantee=exactly_once_v2\n"
        "commit.interval.ms=100\nreplication.factor=1\n"
        f"task.assignor.class={TASK_ASSIGNOR_CLASS}\n"
        f"default.client.supplier={CLIENT_SUPPLIER_CLASS}\n"
        f"segue.answer.wait.ms=30000\ninput.topic={topics[0]}\noutput.topic={topics[1]}\n"
    )
    return path


class Answerer:
    """The operator's part in this test: answer every new report, publishing with the
    operator's own builder and write (``objects.assignment``, ``apply.publish``)."""

    def __init__(self, core: client.CoreV1Api, namespace: str, name: str, uid: str) -> None:
        self.core, self.namespace, self.name, self.uid = core, namespace, name, uid
        self.answered: list[str] = []
        self.version: str | None = None
        self.generation = 0
        self.report: GroupReport | None = None

    def step(self, consumers: list[str]) -> None:
        group = self.core.read_namespaced_config_map(group_configmap(self.name), self.namespace)
        report = decode_report_configmap(group.binary_data)
        if report is None or report.id in self.answered:
            return
        assert (group.data or {}).get("report") == report.id
        self.publish(answer(report, consumers, self.generation + 1))
        self.answered.append(report.id)
        self.report = report

    def publish(self, document: AssignmentDocument) -> None:
        self.generation = document.generation
        body = objects.assignment(self.name, self.uid, self.generation, encode(document), "test")
        self.version = apply.publish(self.core, self.namespace, body, self.version)

    def ask_rejoin(self, consumers: list[str]) -> None:
        """A generation decided while the group runs the last answer, which asks it to
        rejoin (``kafka_streams.rejoin``), as the operator's ``answered`` does."""
        assert self.report is not None
        document = answer(self.report, consumers, self.generation + 1)
        assert document.kafka_streams is not None
        rejoin = document.kafka_streams.model_copy(update={"rejoin": True})
        self.publish(document.model_copy(update={"kafka_streams": rejoin}))

    def reported(self) -> str | None:
        group = self.core.read_namespaced_config_map(group_configmap(self.name), self.namespace)
        return (group.data or {}).get("report")

    def applied(self, consumers: list[str]) -> Applied | None:
        """The plugin's record of the last answered report it ran, once it has written it
        (answering any newer report meanwhile, as the operator would)."""
        applied, deadline = None, time.monotonic() + 30
        while time.monotonic() < deadline:
            self.step(consumers)
            group = self.core.read_namespaced_config_map(group_configmap(self.name), self.namespace)
            applied = decode_applied(group.data)
            if applied is not None and applied.report == self.answered[-1]:
                break
            time.sleep(0.2)
        return applied


def assert_confined(kube: Any, token: str, namespace: str, name: str) -> None:
    """The pod's token reads no other ConfigMap and never writes its placement."""
    configuration = client.Configuration(
        host=kube.server, api_key={"authorization": f"Bearer {token}"}
    )
    configuration.ssl_ca_cert = str(kube.ca_file)
    as_pod = client.CoreV1Api(client.ApiClient(configuration))
    with pytest.raises(client.ApiException) as denied:
        as_pod.read_namespaced_config_map("someone-elses", namespace)
    assert denied.value.status == 403
    with pytest.raises(client.ApiException) as denied:
        as_pod.patch_namespaced_config_map(assignment_configmap(name), namespace, {"data": {}})
    assert denied.value.status == 403


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static-membership"])
def test_the_plugin_reports_and_runs_the_answer_through_its_own_configmaps(  # noqa: PLR0917
    kafka: Any,
    kube: Any,
    kube_api: Any,
    namespace: str,
    streamapp_crd: str,
    tmp_path: Path,
    static: bool,
) -> None:
    core = client.CoreV1Api(kube_api)
    suffix = uuid.uuid4().hex[:6]
    name, application = f"wc{suffix}", f"wc-{suffix}"
    topics = (f"text-{suffix}", f"counts-{suffix}")
    create_topics(kafka.bootstrap_servers, {topics[0]: 3, topics[1]: 3})
    uid = streamapp(Apps(kube_api, namespace), name, application, kafka.bootstrap_servers)
    grant(kube_api, namespace, name, uid)
    core.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="someone-elses"))
    )
    root = pod_root(core, namespace, name, kube, tmp_path / "pod")
    jar, classpath = app.build()
    config = properties(
        tmp_path / "streams.properties", application, kafka.bootstrap_servers, topics, static
    )
    server = urlparse(kube.server)
    env = {
        "SEGUE_STREAMAPP": name,
        "POD_NAMESPACE": namespace,
        "KUBERNETES_SERVICE_HOST": str(server.hostname),
        "KUBERNETES_SERVICE_PORT": str(server.port),
        "SEGUE_POD_ROOT": str(root),
    }
    port, log = free_port(), tmp_path / "app.log"
    proc = app.start(jar, classpath, config, port=port, log=log, env=env)
    operator = Answerer(core, namespace, name, uid)
    want = {w: str(n) for w, n in Counter(w for ln in LINES for w in ln.split()).items()}
    try:
        consumers = re.findall(r'client_id="([^"]+)"', scrape(port, 60))
        assert consumers, log.read_text()[-3000:]
        produce(kafka.bootstrap_servers, topics[0], ((None, ln.encode()) for ln in LINES))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            operator.step(consumers)
            if operator.answered and counts(kafka.bootstrap_servers, topics[1], want, 2) == want:
                break
        assert counts(kafka.bootstrap_servers, topics[1], want, 30) == want, log.read_text()[-4000:]
        text = app.metrics(port)
        assert "segue_kstreams_fallbacks_total 0" in text, text  # Segue's answer every time
        # the group runs the generation answering its last report, and says so
        applied = operator.applied(consumers)
        last = Applied(report=operator.answered[-1], generation=operator.generation)
        assert applied == last, (applied, log.read_text()[-4000:])
        # The operator asks the group to rejoin (the answers here set no follow-up, so
        # nothing else would make it rebalance): the plugin's client supplier rejoins,
        # and the leader reports again
        asked = time.monotonic()
        operator.ask_rejoin(consumers)
        while operator.reported() == operator.answered[-1] and time.monotonic() < asked + 15:
            time.sleep(0.05)
        took = time.monotonic() - asked
        assert operator.reported() != operator.answered[-1], log.read_text()[-4000:]
        print(f"rejoined {took:.2f}s after the ask")
        again = operator.applied(consumers)
        assert again == Applied(report=operator.answered[-1], generation=operator.generation)
    finally:
        proc.terminate()
        proc.wait(60)
    assert operator.answered, "the plugin never reported"
    assert "StickyTaskAssignor" not in log.read_text(), log.read_text()[-4000:]
    assert_confined(kube, (root / SA_DIR / "token").read_text(), namespace, name)
