"""Session fixtures: the real local stack (Kafka, Kubernetes, pod runner), each
started on first use, so a test that needs only Kafka starts only Kafka.

Nothing here is mocked and nothing is skipped: a component that cannot start
fails every test that needs it, with the component's own log tail in the
message (so `CI=true make test` fails loudly instead of passing on less).
Tests that need none of these fixtures (the pure core's) start nothing.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml
from hypothesis import settings

from segue.stack import KafkaBroker, KafkaCluster, KubeControlPlane, StackError
from segue.stack.kafka_secure import SecureKafkaBroker
from segue.stack.kubelet import PodRunner
from segue.stack.localstack import NODE_NAME
from segue.stack.paths import Binaries

pytest_plugins = ["tests.timing"]  # the per-folder times at the end of every run

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


# Every part of the local stack starts through this fixture (Kafka, the API server, the
# pod runner, helm), so a test whose fixtures need it is a ``stack`` test, and so is one
# marked as driving the stack itself; ``make check`` runs the others (docs/ci.md).
STACK_FIXTURE = "binaries"
STACK_MARKERS = ("smoke", "worker", "e2e", "kstreams")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needs = STACK_FIXTURE in getattr(item, "fixturenames", ())
        if needs or any(item.get_closest_marker(m) for m in STACK_MARKERS):
            item.add_marker(pytest.mark.stack)


def _started(component: Any, name: str) -> Any:
    try:
        component.start()
    except Exception as exc:  # any way of not starting is a failure, never a skip
        component.stop()
        pytest.fail(f"{name} could not start: {exc}", pytrace=False)
    return component


@pytest.fixture(scope="session")
def binaries() -> Binaries:
    try:
        return Binaries.locate()
    except StackError as exc:
        pytest.fail(str(exc), pytrace=False)


class SaslLogin(NamedTuple):
    """A user of the session broker's SASL_PLAINTEXT listener (mechanism PLAIN)."""

    bootstrap: str
    username: str
    password: str


# Drawn once per session and recognisable, so a test can search every log, event and
# object for it: a password that shows up anywhere but its Secret is a leak.
SASL_USER = "segue"
SASL_PASSWORD = f"segue-canary-{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory, binaries: Binaries) -> Iterator[KafkaBroker]:
    """A real single-node Kafka broker (KRaft) for the whole session: PLAINTEXT for
    everyone, plus a SASL_PLAINTEXT listener for one user (:func:`kafka_sasl`)."""
    broker = KafkaBroker(
        tmp_path_factory.mktemp("kafka"), binaries, sasl_users={SASL_USER: SASL_PASSWORD}
    )
    yield _started(broker, "Kafka")
    broker.stop()


@pytest.fixture
def broker(tmp_path: Path, binaries: Binaries) -> Iterator[KafkaBroker]:
    """A broker of the test's own, for a test that stops and restarts it."""
    own = _started(KafkaBroker(tmp_path / "kafka", binaries), "Kafka")
    yield own
    own.stop()


@pytest.fixture(scope="session")
def kafka_cluster(
    tmp_path_factory: pytest.TempPathFactory, binaries: Binaries
) -> Iterator[KafkaCluster]:
    """Three KRaft brokers as one cluster (replication factor 3, min.insync.replicas 2)
    for the session: what the fault suite breaks, node by node. A test that stops a
    node starts it again before it ends (:func:`three_brokers`)."""
    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka3"), binaries, 3)
    yield _started(cluster, "Kafka (three brokers)")
    cluster.stop()


@pytest.fixture
def three_brokers(kafka_cluster: KafkaCluster) -> Iterator[KafkaCluster]:
    """The session's three brokers, all serving; after the test, any node it stopped or
    crashed is started again on its data, so the next test finds the cluster whole."""
    assert kafka_cluster.running, "a Kafka node of the session's cluster is down"
    yield kafka_cluster
    for node in kafka_cluster.nodes:
        if not node.running:
            node.start()


@pytest.fixture(scope="session")
def kafka_secure(
    tmp_path_factory: pytest.TempPathFactory, binaries: Binaries
) -> Iterator[SecureKafkaBroker]:
    """Opt-in, a second broker for the session: one that authenticates (SASL_SSL with
    SCRAM-SHA-512, its certificate from the stack's own CA) and authorizes every request
    by ACL (KRaft's StandardAuthorizer). Its PLAINTEXT listener is the harness's, as a
    super user; tests add SCRAM users and grant them ACLs (segue.stack.kafka_acls)."""
    broker = SecureKafkaBroker(tmp_path_factory.mktemp("kafka-secure"), binaries)
    yield _started(broker, "Kafka (SASL_SSL, ACLs)")
    broker.stop()


@pytest.fixture(scope="session")
def kafka_sasl(kafka: KafkaBroker) -> SaslLogin:
    """The session broker's SASL listener and the one user who may log in there."""
    return SaslLogin(kafka.sasl_bootstrap, SASL_USER, SASL_PASSWORD)


@pytest.fixture(scope="session")
def kube(
    tmp_path_factory: pytest.TempPathFactory, binaries: Binaries
) -> Iterator[KubeControlPlane]:
    """A real control plane: etcd, kube-apiserver, kube-controller-manager."""
    plane = _started(KubeControlPlane(tmp_path_factory.mktemp("kube"), binaries), "Kubernetes")
    yield plane
    plane.stop()


@pytest.fixture(scope="session")
def pod_runner(
    tmp_path_factory: pytest.TempPathFactory, kube: KubeControlPlane
) -> Iterator[PodRunner]:
    """The kubelet stand-in: runs pods bound to its Node as local processes."""
    runner = PodRunner(
        kubeconfig=kube.kubeconfig,
        root=tmp_path_factory.mktemp("pods"),
        apiserver_host=kube.host,
        apiserver_port=kube.port,
        ca_file=kube.ca_file,
        node_name=NODE_NAME,
    )
    yield _started(runner, "the pod runner")
    runner.stop()


@pytest.fixture(scope="session")
def kube_api(kube: KubeControlPlane) -> Iterator[object]:
    """A kubernetes.client.ApiClient logged in as the cluster admin."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(kube.kubeconfig))
    yield client
    client.close()


@pytest.fixture
def namespace(kube_api: object) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards (the namespace controller
    then removes everything in it)."""
    from kubernetes import client

    core = client.CoreV1Api(kube_api)
    name = f"t-{uuid.uuid4().hex[:10]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    # Admission rejects pods until the ServiceAccount controller has made `default`.
    deadline = time.monotonic() + 30
    while not core.list_namespaced_service_account(
        name, field_selector="metadata.name=default"
    ).items:
        if time.monotonic() > deadline:
            pytest.fail(f"namespace {name}: no default ServiceAccount after 30s", pytrace=False)
        time.sleep(0.1)
    yield name
    _release_streamapps(kube_api, name)
    core.delete_namespace(name)


def _release_streamapps(kube_api: object, namespace: str) -> None:
    """Take the operator's finalizer off the namespace's StreamApps, as docs/install.md
    tells a user whose operator is gone: a test's operator stops before its namespace
    is deleted, and a StreamApp that keeps the finalizer holds the namespace Terminating
    for the rest of the run (the namespace controller retrying it all the while)."""
    from kubernetes import client
    from kubernetes.client import ApiException

    from segue.operator.api import GROUP, PLURAL, VERSION

    custom = client.CustomObjectsApi(kube_api)
    try:
        listed = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
    except ApiException as exc:
        if exc.status == 404:  # the CRD is not installed: no StreamApp can exist
            return
        raise
    for item in listed["items"]:
        if item["metadata"].get("finalizers"):
            name = item["metadata"]["name"]
            patch = {"metadata": {"finalizers": None}}
            custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, patch)


@pytest.fixture
def topic_name() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


CRD_FILE = Path(__file__).resolve().parents[1] / "crds" / "streamapp.yaml"


def _established(crd: Any) -> bool:
    conditions = (crd.status and crd.status.conditions) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


@pytest.fixture(scope="session")
def apply_streamapp_crd(kube_api: Any) -> Callable[[], str]:
    """``apply()``: create or replace the StreamApp CRD from ``crds/streamapp.yaml``
    and wait until it is Established; returns its name. Idempotent."""
    from kubernetes import client
    from kubernetes.client import ApiException

    ext = client.ApiextensionsV1Api(kube_api)

    def apply() -> str:
        body = yaml.safe_load(CRD_FILE.read_text())
        name = str(body["metadata"]["name"])
        try:
            ext.create_custom_resource_definition(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            current = ext.read_custom_resource_definition(name).to_dict()
            body["metadata"]["resourceVersion"] = current["metadata"]["resource_version"]
            ext.replace_custom_resource_definition(name, body)
        deadline = time.monotonic() + 30
        while not _established(ext.read_custom_resource_definition(name)):
            if time.monotonic() > deadline:
                pytest.fail(f"CRD {name} not Established after 30s", pytrace=False)
            time.sleep(0.1)
        return name

    return apply


@pytest.fixture(scope="session")
def streamapp_crd(apply_streamapp_crd: Callable[[], str]) -> str:
    """The StreamApp CRD, installed once per session; its name."""
    return apply_streamapp_crd()
