"""A Kafka broker with one more listener whose advertised address is a proxy's, so
that a client which bootstraps through the proxy stays behind it for every connection.

A Kafka client connects to the bootstrap address once, then to the addresses the
metadata advertises for each broker. A proxy in front of the ordinary listener would
be left after the first metadata call. So the broker gets a listener ``PROXIED`` on
``host:upstream_port`` advertised as ``host:proxy_port``, where the proxy listens and
relays to ``upstream_port``: a client bootstrapping at :attr:`proxied_bootstrap`
learns the proxy's address from the metadata and never leaves it. The ``PLAINTEXT``
listener (everyone else, the inter-broker traffic) is unchanged, and
:class:`~segue.stack.kafka.KafkaBroker` itself is not touched: the session's broker
and the three-broker cluster have no such listener.
"""

from __future__ import annotations

from typing import Any

from segue.stack.kafka import KafkaBroker
from segue.stack.process import free_port

LISTENER = "PROXIED"


class ProxiedKafkaBroker(KafkaBroker):
    """:class:`KafkaBroker` plus the ``PROXIED`` listener (module doc). Both ports are
    drawn at construction and kept across a restart, as the broker's own are."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.upstream_port = free_port(self.host)  # the broker binds it; the proxy relays here
        self.proxy_port = free_port(self.host)  # the proxy binds it; the broker advertises it

    @property
    def proxied_upstream(self) -> str:
        """Where the proxy relays to: the listener itself."""
        return f"{self.host}:{self.upstream_port}"

    @property
    def proxied_bootstrap(self) -> str:
        """What a client behind the proxy bootstraps at: the proxy's address."""
        return f"{self.host}:{self.proxy_port}"

    def _listeners(self) -> dict[str, str]:
        listeners = super()._listeners()
        return {
            **listeners,
            "listeners": f"{listeners['listeners']},{LISTENER}://{self.proxied_upstream}",
            "advertised.listeners": (
                f"{listeners['advertised.listeners']},{LISTENER}://{self.proxied_bootstrap}"
            ),
            "listener.security.protocol.map": (
                f"{listeners['listener.security.protocol.map']},{LISTENER}:PLAINTEXT"
            ),
        }
