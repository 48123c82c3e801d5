"""All of the local stack together: Kafka, the Kubernetes control plane and the
pod runner, started in the right order and torn down in reverse.

Kafka and the control plane start in parallel (both are slow, neither needs the
other); the pod runner needs the apiserver. Used by the session fixtures in
tests/conftest.py and by ``segue stack up`` (``make demo``).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from segue.stack.kafka import KafkaBroker
from segue.stack.kafka_cluster import KafkaCluster
from segue.stack.kube import KubeControlPlane
from segue.stack.paths import Binaries, cache_dir
from segue.stack.process import StackError

if TYPE_CHECKING:
    from segue.stack.kubelet import PodRunner

NODE_NAME = "segue-local"


class LocalStack:
    def __init__(
        self,
        workdir: Path | None = None,
        *,
        with_kafka: bool = True,
        with_kube: bool = True,
        with_pods: bool = True,
        keep_workdir: bool = False,
        kafka_port: int | None = None,
        brokers: int = 1,
    ) -> None:
        self._own_workdir = workdir is None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="segue-stack-"))
        self.keep_workdir = keep_workdir
        self.binaries = Binaries.locate()
        self.kafka: KafkaBroker | KafkaCluster | None = None
        if with_kafka and brokers == 1:
            self.kafka = KafkaBroker(self.workdir / "kafka", self.binaries, port=kafka_port)
        elif with_kafka:
            self.kafka = KafkaCluster(self.workdir, self.binaries, brokers, port=kafka_port)
        self.kube = KubeControlPlane(self.workdir / "kube", self.binaries) if with_kube else None
        self.with_pods = with_pods and with_kube
        self.pods: PodRunner | None = None

    def start(self) -> LocalStack:
        errors: list[BaseException] = []

        def start_kafka() -> None:
            try:
                if self.kafka is not None:
                    self.kafka.start()
            except BaseException as exc:  # reported below, in this thread
                errors.append(exc)

        kafka_thread = threading.Thread(target=start_kafka, name="start-kafka")
        kafka_thread.start()
        try:
            if self.kube is not None:
                self.kube.start()
                if self.with_pods:
                    from segue.stack.kubelet import PodRunner

                    self.pods = PodRunner(
                        kubeconfig=self.kube.kubeconfig,
                        root=self.workdir / "pods",
                        apiserver_host=self.kube.host,
                        apiserver_port=self.kube.port,
                        ca_file=self.kube.ca_file,
                        node_name=NODE_NAME,
                    )
                    self.pods.start()
        except BaseException:
            kafka_thread.join()
            self.stop()
            raise
        kafka_thread.join()
        if errors:
            self.stop()
            raise StackError(f"Kafka did not start: {errors[0]}") from errors[0]
        return self

    def stop(self) -> None:
        if self.pods is not None:
            self.pods.stop()
            self.pods = None
        if self.kube is not None:
            self.kube.stop()
        if self.kafka is not None:
            self.kafka.stop()
        if self._own_workdir and not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def describe(self, context_in: Path | None = None) -> str:
        """How to reach the stack, for people: printed by ``segue stack up``;
        ``context_in`` is the kubectl config it was added to as ``segue-local``."""
        lines = [f"Segue local stack (work dir {self.workdir}, cache {cache_dir()})", ""]
        if self.kube is not None:
            lines.append(f"Kubernetes (apiserver, controller-manager, etcd) at {self.kube.server}")
            if context_in is not None:
                lines += [
                    f"  kubectl's current context is segue-local ({context_in}) until the "
                    "stack stops:",
                    "  kubectl get nodes,pods -A",
                    f"  (or: export KUBECONFIG={self.kube.kubeconfig})",
                ]
            else:
                lines += [
                    f"  export KUBECONFIG={self.kube.kubeconfig}",
                    "  kubectl get nodes,pods -A",
                ]
            lines.append(f"  kubectl: {self.binaries.kubectl}, helm: {self.binaries.helm}")
            if self.pods is not None:
                lines.append(f"  pods run as local processes on node {NODE_NAME!r}")
            lines.append("")
        if self.kafka is not None:
            bs = self.kafka.bootstrap_servers
            shape = "single node"
            if isinstance(self.kafka, KafkaCluster):
                shape = (
                    f"{self.kafka.replication} brokers, replication factor "
                    f"{self.kafka.replication}, min.insync.replicas {self.kafka.min_insync}"
                )
            lines += [
                f"Apache Kafka (KRaft, {shape}): bootstrap servers {bs}",
                f"  kafka-topics.sh --bootstrap-server {bs} --list",
                "",
            ]
        return "\n".join(lines)
