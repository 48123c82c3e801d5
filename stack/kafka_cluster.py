"""Several KRaft nodes (``kafka.KafkaBroker``) as one Apache Kafka cluster: what Segue
runs against in production, with replicated topics (docs/reliability.md).

Every node is broker and controller, and all of them are the quorum's voters, so a
cluster of three keeps a majority, and serves, with any one node down. Every topic the
cluster creates without a replication factor of its own (the apps', Segue's, the internal
``__consumer_offsets`` and ``__transaction_state``) gets one replica per node and
``min.insync.replicas`` one less: with three, an ``acks=all`` write or a transaction
commits with one broker down, never with two.

The nodes share a cluster id and keep their data and ports across a restart of any one of
them (:meth:`KafkaCluster.node`, then the node's ``restart``/``crash``/``start``), which is
how the fault suite restarts brokers one at a time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from segue.stack.kafka import KafkaBroker, new_cluster_id
from segue.stack.paths import Binaries
from segue.stack.process import StackError


class KafkaCluster:
    def __init__(
        self,
        workdir: Path,
        binaries: Binaries,
        size: int = 3,
        host: str = "127.0.0.1",
        port: int | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"a Kafka cluster of {size} brokers: at least 1")
        self.workdir = workdir
        self.nodes = [
            KafkaBroker(
                workdir / f"kafka-{i}",
                binaries,
                host,
                port=port if i == 1 else None,  # the first node on the port asked for
                node_id=i,
                replication=size,
            )
            for i in range(1, size + 1)
        ]
        voters = ",".join(f"{n.node_id}@{host}:{n.controller_port}" for n in self.nodes)
        cluster_id = new_cluster_id()
        for node in self.nodes:
            node.voters, node.cluster_id = voters, cluster_id

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.bootstrap_servers for n in self.nodes)

    @property
    def replication(self) -> int:
        return len(self.nodes)

    @property
    def min_insync(self) -> int:
        return self.nodes[0].min_insync

    def node(self, node_id: int) -> KafkaBroker:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise StackError(f"no Kafka node {node_id} (nodes 1..{len(self.nodes)})")

    def start(self, timeout: float = 120.0) -> None:
        """Launch every node, then wait for each to serve: none does before the quorum
        has a majority, so they cannot start one after the other."""
        deadline = time.monotonic() + timeout
        try:
            for n in self.nodes:
                n.launch()
            for n in self.nodes:
                n.wait_ready(max(1.0, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise

    @property
    def running(self) -> bool:
        return all(n.running for n in self.nodes)

    def stop(self, grace: float = 20.0) -> None:
        """Stop every node at once: one at a time, the last ones would wait out their
        controlled shutdown for a quorum that is already gone."""
        threads = [
            threading.Thread(target=n.stop, args=(grace,), name=f"stop-kafka-{n.node_id}")
            for n in self.nodes
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
