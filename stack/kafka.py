"""One Apache Kafka node in KRaft mode, run from Maven Central jars.

One process is both controller and broker. Alone (the default) it is a single-node
cluster whose internal topics have replication factor 1; ``kafka_cluster`` makes three of
them one cluster with a three-voter quorum and replication factor 3. The group rebalance
delay is 0 so tests do not wait three seconds per consumer group. Transactions, fencing,
compaction and the admin API are the real broker's: nothing is mocked.

The broker can be stopped and started again (:meth:`KafkaBroker.restart`, the
fault suite's broker restart): storage is formatted only when the data directory
is new, so a second start keeps its cluster id, topics, offsets and transactions,
and the ports are fixed at construction, so clients reconnect to the same address.

Given ``sasl_users``, the broker also listens on a SASL_PLAINTEXT listener with the
PLAIN mechanism, where those users (and no one else) authenticate: what a client
configured from a credentials Secret must get right. The PLAINTEXT listener stays,
unauthenticated, for everything else (test harnesses, the inter-broker traffic).
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from segue.stack import cds
from segue.stack.paths import Binaries
from segue.stack.process import ManagedProcess, StackError, free_port, port_open

LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
"""


def new_cluster_id() -> str:
    """A KRaft cluster id (base64url of a UUID, as Kafka's own tool makes them).

    One that starts with '-' would be read as an option by the storage tool's
    argument parser, so draw again: the id is random anyway.
    """
    while True:
        candidate = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not candidate.startswith("-"):
            return candidate


# Names and passwords go into a JAAS line inside a properties file, two quoting
# languages; a test's credentials need neither, so only this safe alphabet is taken.
SASL_TOKEN = re.compile(r"[A-Za-z0-9._-]+")


class KafkaBroker:
    def __init__(
        self,
        workdir: Path,
        binaries: Binaries,
        host: str = "127.0.0.1",
        sasl_users: Mapping[str, str] | None = None,
        port: int | None = None,
        *,
        node_id: int = 1,
        replication: int = 1,
    ) -> None:
        self.workdir = workdir
        self.node_id = node_id
        # every topic's default and the internal topics': min ISR one less, so a cluster
        # of three keeps taking acks=all writes with a broker down
        self.replication = replication
        self.min_insync = max(1, replication - 1)
        self.binaries = binaries
        self.jvm_flags = cds.flags(binaries)  # the class data sharing archive, once made
        self.host = host
        self.fixed_port = port is not None  # a port asked for, not drawn: check it is free
        self.port = port if port is not None else free_port(host)
        self.controller_port = free_port(host)
        self.sasl_users = dict(sasl_users or {})  # username -> password, PLAIN
        for name, password in self.sasl_users.items():
            if not (SASL_TOKEN.fullmatch(name) and SASL_TOKEN.fullmatch(password)):
                raise ValueError(
                    f"SASL user {name!r}: name and password must match [A-Za-z0-9._-]+"
                )
        self.sasl_port = free_port(host) if self.sasl_users else None
        self.cluster_id = new_cluster_id()
        # the controller quorum: this node alone unless a cluster sets all its voters
        self.voters = f"{node_id}@{host}:{self.controller_port}"
        self.process: ManagedProcess | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def sasl_bootstrap(self) -> str:
        """The SASL_PLAINTEXT (PLAIN) listener: only ``sasl_users`` get in."""
        if self.sasl_port is None:
            raise StackError("this broker was started without sasl_users")
        return f"{self.host}:{self.sasl_port}"

    def _listeners(self) -> dict[str, str]:
        listeners = {
            "listeners": f"PLAINTEXT://{self.host}:{self.port},"
            f"CONTROLLER://{self.host}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{self.host}:{self.port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        }
        if self.sasl_port is None:
            return listeners
        sasl = f"SASL_PLAINTEXT://{self.host}:{self.sasl_port}"
        users = " ".join(f'user_{name}="{password}"' for name, password in self.sasl_users.items())
        prefix = "listener.name.sasl_plaintext"
        return {
            "listeners": f"{listeners['listeners']},{sasl}",
            "advertised.listeners": f"{listeners['advertised.listeners']},{sasl}",
            "listener.security.protocol.map": listeners["listener.security.protocol.map"]
            + ",SASL_PLAINTEXT:SASL_PLAINTEXT",
            f"{prefix}.sasl.enabled.mechanisms": "PLAIN",
            # The server side of PLAIN: one user_<name>="<password>" option per user.
            f"{prefix}.plain.sasl.jaas.config": (
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
            ),
        }

    def _write_config(self) -> Path:
        data = self.data_dir
        data.mkdir(parents=True, exist_ok=True)
        rf, isr = str(self.replication), str(self.min_insync)
        props = {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters,
            **self._listeners(),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(data),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
            "default.replication.factor": rf,
            "min.insync.replicas": isr,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": "10",
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": isr,
            "transaction.state.log.num.partitions": "10",
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": isr,
            "group.initial.rebalance.delay.ms": "0",
            # Compaction runs soon enough to be observed in tests.
            "log.cleaner.backoff.ms": "1000",
        }
        path = self.workdir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.workdir / "log4j2.properties").write_text(
            LOG4J2.format(log=self.workdir / "server.log")
        )
        return path

    def _java(self, main: str, *args: str) -> list[str]:
        return [
            str(self.binaries.java),
            "-Xms256m",
            "-Xmx768m",
            "-XX:+UseG1GC",
            "-XX:TieredStopAtLevel=1",  # faster start on 2 cores; a test broker is not hot
            "-Djava.awt.headless=true",
            *self.jvm_flags,
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
            "-cp",
            f"{self.binaries.kafka_libs}/*",
            main,
            *args,
        ]

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    def formatted_cluster_id(self) -> str | None:
        """The cluster id the data directory was formatted with, if it was."""
        meta = self.data_dir / "meta.properties"
        if not meta.exists():
            return None
        for line in meta.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "cluster.id":
                return value.strip()
        return None

    def start(self, timeout: float = 90.0) -> None:
        """Start the broker and wait until it serves (alone: a cluster launches all its
        nodes first, since none serves before the quorum has a majority)."""
        self.launch()
        self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the process; format its storage only if the data directory is new
        (formatting a used one is refused by Kafka, and would lose its data)."""
        if self.fixed_port and port_open(self.host, self.port):
            # else the readiness check below would find the other server and trust it
            raise StackError(
                f"Kafka's port {self.host}:{self.port} is taken (another broker, or another "
                "`segue stack up`?): stop it, or choose another port"
            )
        config = self._write_config()
        existing = self.formatted_cluster_id()
        if existing is None:
            self._format(config)
        else:
            self.cluster_id = existing
        self.process = ManagedProcess(
            "kafka", self._java("kafka.Kafka", str(config)), self.workdir / "stdout.log"
        )
        self.process.start()

    def wait_ready(self, timeout: float = 90.0) -> None:
        if self.process is None:
            raise StackError(f"Kafka node {self.node_id} was not launched")
        self.process.wait_ready(self._ready, timeout, "accepting client requests")

    def _format(self, config: Path) -> None:
        fmt = ManagedProcess(
            "kafka-storage-format",
            self._java(
                "kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(config)
            ),
            self.workdir / "format.log",
        )
        fmt.start()
        assert fmt.proc is not None
        if fmt.proc.wait(60) != 0:
            raise StackError(f"formatting Kafka storage failed:\n{fmt.log_tail()}")

    def _ready(self) -> bool:
        if not port_open(self.host, self.port):
            return False
        if self.sasl_port is not None and not port_open(self.host, self.sasl_port):
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        metadata = admin.list_topics(timeout=2)
        return self.node_id in metadata.brokers  # registered with the quorum

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM (a controlled shutdown), SIGKILL after ``grace`` seconds."""
        if self.process is not None:
            self.process.stop(grace=grace)
            self.process = None

    def crash(self) -> None:
        """SIGKILL: the broker dies without its controlled shutdown, as in a crash of
        its process (what it wrote stays in the page cache; log recovery runs on the
        next start). Unlike ``stop``, it does not make the broker's partitions
        leaderless while its transaction coordinator still completes transactions
        (docs/reliability.md, "A transaction committed while the only broker stops")."""
        if self.process is not None:
            self.process.kill()
            self.process = None

    def restart(self, downtime: float = 0.0, timeout: float = 90.0) -> float:
        """Stop the broker, stay down ``downtime`` seconds, start it again on the same
        data and ports; returns the seconds from the stop until it serves again."""
        began = time.monotonic()
        self.stop()
        time.sleep(downtime)
        self.start(timeout)
        return time.monotonic() - began
