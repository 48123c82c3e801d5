"""The show's cluster side: Segue installed the way users install it (``helm install``
of charts/segue), WordCount from examples/wordcount.yaml applied with ``kubectl``, and
the actions a script's steps take (:class:`Cluster` is the ``steps.Stage``).

Two things differ from a real cluster, both because the local stack has no Service
networking (docs/pod-runner.md): each pod is reached by its podIP, and the chart's
external-metrics Service becomes an ``ExternalName`` Service naming the operator
pod's address, which is where a ClusterIP would have routed the aggregation layer
(the chart's operator listens on 443 for it: the pod runner runs as root).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewPartitions, NewTopic
from kubernetes import client

from segue.stack.paths import Binaries

REPO = Path(__file__).resolve().parents[2]
APP, RELEASE, SYSTEM = "wordcount", "segue", "segue-system"
INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"


class Cluster:
    def __init__(
        self,
        api: Any,
        kubeconfig: Path,
        bootstrap: str,
        namespace: str,
        *,
        settle_timeout: float,
    ) -> None:
        self.api, self.kubeconfig, self.bootstrap = api, kubeconfig, bootstrap
        self.namespace, self.settle_timeout = namespace, settle_timeout
        self.binaries = Binaries.locate()
        self.core: Any = client.CoreV1Api(api)
        self.replicas = 2
        self.bursts: list[dict[str, int]] = []  # what each burst sent, word -> lines
        self.balanced: Callable[[int], bool] = lambda _: False  # set by the show
        self.running: Callable[[str], bool] = lambda _: False  # a task runs somewhere
        self.on_kill: Callable[[str], None] = lambda _: None  # told the killed pod's uid
        self.lag: Callable[[], int | None] = lambda: None  # the input's, records
        self.hpa_replicas: list[int] = []

    # -- commands, as a user types them ---------------------------------------

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return self._run(self.binaries.kubectl, args, stdin)

    def helm(self, *args: str) -> str:
        return self._run(self.binaries.helm, args, None)

    def _run(self, binary: Path, args: tuple[str, ...], stdin: str | None) -> str:
        done = subprocess.run(
            [str(binary), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{binary.name} {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    # -- setting up ----------------------------------------------------------------

    def install(self) -> None:
        """``helm install`` of the chart, watching the show's namespace."""
        self.kubectl("create", "namespace", self.namespace)
        self.helm(
            "install", RELEASE, str(REPO / "charts" / "segue"), "-n", SYSTEM,
            "--create-namespace", "--wait", "--timeout", "180s",
            "--set", f"watchNamespaces={{{self.namespace}}}",
            "--set", "externalMetrics.port=443",
            "--set-json", "settings.busyInterval=0.3",
        )  # fmt: skip
        self._route_external_metrics()

    def await_operator(self) -> str:
        """Once the operator's leader (its Lease's holder) is a Ready pod, which it is
        only once it watches StreamApps; its name. Waits ``settle_timeout`` at most."""
        coordination: Any = client.CoordinationV1Api(self.api)
        deadline = time.monotonic() + self.settle_timeout
        while time.monotonic() < deadline:
            try:
                holder = coordination.read_namespaced_lease(RELEASE, SYSTEM).spec.holder_identity
                if holder and _ready(self.core.read_namespaced_pod(holder, SYSTEM)):
                    return str(holder)
            except client.ApiException as exc:
                if exc.status != 404:  # no lease yet, or its holder's pod is gone
                    raise
            time.sleep(0.2)
        raise TimeoutError(f"no operator replica leads and watches within {self.settle_timeout}s")

    def _route_external_metrics(self) -> None:
        pods = self.core.list_namespaced_pod(
            SYSTEM, label_selector=f"app.kubernetes.io/instance={RELEASE}"
        ).items
        ip = next(p.status.pod_ip for p in pods if p.status.pod_ip)
        name = f"{RELEASE}-external-metrics"
        self.core.delete_namespaced_service(name, SYSTEM)
        self.core.create_namespaced_service(
            SYSTEM,
            {
                "metadata": {"name": name},
                "spec": {
                    "type": "ExternalName",
                    "externalName": ip,
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP"}],
                },
            },
        )

    def topics(self, partitions: int) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        new = [
            NewTopic(INPUT, num_partitions=partitions, replication_factor=-1),
            NewTopic(
                OUTPUT,
                num_partitions=partitions,
                replication_factor=-1,  # the cluster's default (3 on three brokers)
                config={"message.timestamp.type": "LogAppendTime"},
            ),
        ]
        for future in admin.create_topics(new).values():
            future.result(timeout=30)

    def deploy(self) -> str:
        """examples/wordcount.yaml with this stack's brokers, applied with ``kubectl
        apply``; its applicationId."""
        body = yaml.safe_load((REPO / "examples" / f"{APP}.yaml").read_text())
        spec = body["spec"]
        spec["kafka"]["bootstrapServers"] = self.bootstrap
        spec["autoscaling"] = {"catchUpSeconds": 10}  # the burst's backlog: drain it in 10 s
        spec["scaling"]["expansionTimeoutSeconds"] = 5  # new input partitions: act soon
        self.kubectl("apply", "-n", self.namespace, "-f", "-", stdin=yaml.safe_dump(body))
        return str(spec["applicationId"])

    # -- the steps (steps.Stage) -------------------------------------------------------

    def scale(self, replicas: int) -> None:
        self.kubectl("scale", "-n", self.namespace, f"streamapp/{APP}", f"--replicas={replicas}")
        self.replicas = replicas

    def kill_pod(self) -> str:
        """Force-delete the first worker pod (its processes get SIGKILL); returns once
        its next instance is ready."""
        pods = self._pods()
        victim = sorted(pods, key=lambda p: str(p.metadata.name))[0]
        name, uid = str(victim.metadata.name), str(victim.metadata.uid)
        self.on_kill(uid)
        self.kubectl("delete", "pod", "-n", self.namespace, name, "--grace-period=0", "--force")
        deadline = time.monotonic() + self.settle_timeout
        while not any(
            p.metadata.name == name and p.metadata.uid != uid and _ready(p) for p in self._pods()
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} not back within {self.settle_timeout:.0f}s")
            time.sleep(0.5)
        return name

    def _pods(self) -> list[Any]:
        items = self.core.list_namespaced_pod(
            self.namespace, label_selector=f"segue.dev/app={APP}"
        ).items
        return [p for p in items if not p.metadata.deletion_timestamp]

    def add_partitions(self, factor: int) -> int:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        now = len(admin.list_topics(INPUT, timeout=10).topics[INPUT].partitions)
        for future in admin.create_partitions([NewPartitions(INPUT, now * factor)]).values():
            future.result(timeout=30)
        last = f"0_{now * factor - 1}"  # the new input partitions' last task
        deadline = time.monotonic() + self.settle_timeout
        while not self.running(last):
            if time.monotonic() > deadline:
                raise TimeoutError(f"task {last} not running within {self.settle_timeout:.0f}s")
            time.sleep(0.5)
        return now * factor

    def burst(self, records: int) -> int:
        """An HPA on the app (min: today's replicas, max 6), then ``records`` lines at
        once; waits for the HPA to ask for more pods or for the backlog to drain
        (whichever comes first, and at least two of the HPA's 5 s syncs), then for the
        app to settle on what the HPA asked for."""
        hpa = yaml.safe_load((REPO / "examples" / f"{APP}-hpa.yaml").read_text())
        hpa["spec"]["minReplicas"] = self.replicas
        hpa["spec"]["behavior"]["scaleUp"]["policies"][0]["periodSeconds"] = 15
        self.kubectl("apply", "-n", self.namespace, "-f", "-", stdin=yaml.safe_dump(hpa))
        self.bursts.append(produce_lines(self.bootstrap, records, words=WORDS, tag="b"))
        began = time.monotonic()
        while self._spec_replicas() == self.replicas:
            waited, lag = time.monotonic() - began, self.lag()
            if waited > self.settle_timeout or (waited > 12 and lag is not None and lag < 500):
                break
            time.sleep(0.5)
        # The HPA goes first, then the count is read: read first, a scale-up the HPA made
        # meanwhile (3 -> 4 read, 5 written before the delete) left the show waiting for
        # 4 pods of an app scaled to 5 (seen once in CI).
        self.kubectl("delete", "hpa", "-n", self.namespace, APP)
        self.replicas = self._spec_replicas()
        self.hpa_replicas.append(self.replicas)
        self.settle(self.replicas)
        return self.replicas

    def settle(self, replicas: int) -> float:
        began = time.monotonic()
        while not self.balanced(replicas):
            if time.monotonic() - began > self.settle_timeout:
                raise TimeoutError(
                    f"{APP} not balanced on {replicas} pods within {self.settle_timeout:.0f}s"
                )
            time.sleep(0.5)
        return time.monotonic() - began

    def _spec_replicas(self) -> int:
        custom: Any = client.CustomObjectsApi(self.api)
        obj = custom.get_namespaced_custom_object(
            "segue.dev", "v1alpha1", self.namespace, "streamapps", APP
        )
        return int(obj["spec"]["replicas"])


WORDS = 600  # distinct words: each counting task holds about WORDS / tasks counts


def produce_lines(bootstrap: str, records: int, *, words: int, tag: str) -> dict[str, int]:
    """``records`` lines as fast as the broker takes them; word -> lines sent. Idempotent:
    a produce request retried after a timeout (a busy broker under a burst) would
    otherwise write its lines twice, and the app would rightly count them twice."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True}
    )
    sent: dict[str, int] = {}
    for i in range(records):
        word = f"w{i % words}"
        while True:
            try:
                producer.produce(INPUT, key=f"{tag}{i}", value=word)
                break
            except BufferError:
                producer.poll(0.1)
        sent[word] = sent.get(word, 0) + 1
    if producer.flush(60) != 0:
        raise RuntimeError("the input was not all acknowledged within 60s")
    return sent


def _ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])
