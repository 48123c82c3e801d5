"""A Kafka node that asks who you are: SASL_SSL with SCRAM-SHA-512, and ACLs.

Production clusters authenticate every client and authorize every request; the
``credentialsSecret`` path must be proven against such a broker, not only against the
session broker's PLAIN listener. :class:`SecureKafkaBroker` is a :class:`KafkaBroker`
with one more listener, ``SASL_SSL``: TLS with a serving certificate for the broker's
address signed by a CA of the stack's own (``certs.serving_pair``; clients trust it
through ``ssl.ca.pem``), SCRAM-SHA-512 logins, and KRaft's ``StandardAuthorizer``
deciding every request by ACL (``kafka_acls`` writes them; nothing is allowed where no
ACL says so).

The PLAINTEXT and CONTROLLER listeners stay, on 127.0.0.1 only, for the node itself
(the controller and broker talk there) and the test harness (it creates topics, writes
input, reads output and grants ACLs): their principal ``User:ANONYMOUS`` is the one
super user. SCRAM users are added through the admin API (:meth:`add_user`), so a test
draws its own names and passwords and none is ever on a command line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue.stack.certs import serving_pair
from segue.stack.kafka import KafkaBroker
from segue.stack.paths import Binaries
from segue.stack.process import StackError, free_port, port_open

MECHANISM = "SCRAM-SHA-512"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
HARNESS = "User:ANONYMOUS"  # PLAINTEXT and CONTROLLER: the node itself and the harness


@dataclass(frozen=True)
class ScramLogin:
    """One SCRAM user of a :class:`SecureKafkaBroker`'s SASL_SSL listener."""

    bootstrap: str
    username: str
    password: str
    ca_pem: str

    @property
    def principal(self) -> str:
        return f"User:{self.username}"

    def settings(self, password: str | None = None) -> dict[str, str]:
        """The librdkafka settings of a client logged in as this user: what a
        credentials Secret holds, with ``bootstrap.servers`` (with ``password`` instead
        of the real one, for a wrong-password test)."""
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": MECHANISM,
            "sasl.username": self.username,
            "sasl.password": self.password if password is None else password,
            "ssl.ca.pem": self.ca_pem,
        }


class SecureKafkaBroker(KafkaBroker):
    def __init__(self, workdir: Path, binaries: Binaries, host: str = "127.0.0.1") -> None:
        super().__init__(workdir, binaries, host)
        self.secure_port = free_port(host)
        ca, serving = serving_pair(workdir / "tls", dns=("localhost",), ips=(host,))
        self.ca_pem = ca.cert.read_text()
        # Kafka's PEM key store: the (unencrypted PKCS#8) key, then the certificate chain
        self.keystore = workdir / "tls" / "broker-keystore.pem"
        self.keystore.write_text(serving.key.read_text() + serving.cert.read_text())
        self.keystore.chmod(0o600)

    @property
    def secure_bootstrap(self) -> str:
        """The SASL_SSL listener: SCRAM users only, each limited by its ACLs."""
        return f"{self.host}:{self.secure_port}"

    def _listeners(self) -> dict[str, str]:
        plain = super()._listeners()
        secure = f"SASL_SSL://{self.host}:{self.secure_port}"
        prefix = "listener.name.sasl_ssl"
        return {
            "listeners": f"{plain['listeners']},{secure}",
            "advertised.listeners": f"{plain['advertised.listeners']},{secure}",
            "listener.security.protocol.map": plain["listener.security.protocol.map"]
            + ",SASL_SSL:SASL_SSL",
            f"{prefix}.sasl.enabled.mechanisms": MECHANISM,
            f"{prefix}.{MECHANISM.lower()}.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            f"{prefix}.ssl.keystore.type": "PEM",
            f"{prefix}.ssl.keystore.location": str(self.keystore),
            "authorizer.class.name": AUTHORIZER,
            "super.users": HARNESS,
            "allow.everyone.if.no.acl.found": "false",
        }

    def _ready(self) -> bool:
        return port_open(self.host, self.secure_port) and super()._ready()

    def add_user(self, username: str, password: str, timeout: float = 30.0) -> ScramLogin:
        """Create (or reset) a SCRAM-SHA-512 user, and wait until it can log in.

        A user with no ACLs logs in and may do nothing; :mod:`segue.stack.kafka_acls`
        grants what it may."""
        from confluent_kafka.admin import AdminClient
        from confluent_kafka.admin._scram import (  # not re-exported for mypy
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        upsert = UserScramCredentialUpsertion(
            username,
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
            password.encode(),
        )
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout)
        login = ScramLogin(self.secure_bootstrap, username, password, self.ca_pem)
        deadline = time.monotonic() + timeout
        while not logs_in(login):
            if time.monotonic() > deadline:
                raise StackError(f"SCRAM user {username} cannot log in after {timeout}s")
            time.sleep(0.2)
        return login


def logs_in(login: ScramLogin, timeout: float = 5.0) -> bool:
    """Whether ``login`` authenticates (a metadata request needs no ACL to answer)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    failures: list[Any] = []
    config: dict[str, Any] = {**login.settings(), "error_cb": failures.append}
    admin = AdminClient(config)
    try:
        admin.list_topics(timeout=timeout)
    except KafkaException:
        return False
    return not failures
