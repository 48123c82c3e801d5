"""The network fault's tools, without Kafka: Toxiproxy really sits in the path and its
toxics do what tests/faults/test_network.py relies on, and the proxied broker's
listeners advertise the proxy's address (``segue.stack.kafka_proxied``).

A local echo server behind the proxy stands in for the broker here (only bytes are
relayed; which protocol they carry does not matter to the proxy).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from segue.stack.kafka_proxied import ProxiedKafkaBroker
from segue.stack.paths import Binaries
from segue.stack.process import free_port
from segue.stack.toxiproxy import Proxy, Toxiproxy

pytestmark = pytest.mark.smoke


def _echo(server: socket.socket) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(conn,), daemon=True).start()


def _relay(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(4096):
            conn.sendall(data)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_echo, args=(server,), daemon=True).start()
    toxiproxy = Toxiproxy(tmp_path)
    toxiproxy.start()
    try:
        yield toxiproxy.proxy("echo", free_port(), f"127.0.0.1:{server.getsockname()[1]}")
    finally:
        toxiproxy.stop()
        server.close()


def _round_trip(port: int, timeout: float = 5.0) -> float:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        began = time.monotonic()
        conn.sendall(b"ping")
        assert conn.recv(4) == b"ping"
        return time.monotonic() - began


def test_latency_then_a_cut_then_the_plain_relay_again(proxy: Proxy) -> None:
    port = proxy.listen_port
    plain = _round_trip(port)
    proxy.add("latency", "latency", latency=300)
    slow = _round_trip(port)
    proxy.add("cut-upstream", "timeout", "upstream", timeout=0)
    proxy.add("cut-downstream", "timeout", "downstream", timeout=0)
    with pytest.raises(TimeoutError):  # accepted, then silence: no reset, no answer
        _round_trip(port, timeout=1.0)
    proxy.clear()
    proxy.reset()
    again = _round_trip(port)
    print(f"\nround trip: plain {plain * 1000:.0f} ms, 300 ms toxic {slow * 1000:.0f} ms, "
          f"healed {again * 1000:.0f} ms")  # fmt: skip
    assert slow >= 0.3 > plain
    assert again < 0.3
    assert proxy.toxics() == []


def test_the_proxied_listener_is_advertised_at_the_proxy(
    tmp_path: Path, binaries: Binaries
) -> None:
    broker = ProxiedKafkaBroker(tmp_path, binaries)
    listeners = broker._listeners()
    assert f"PROXIED://{broker.proxied_upstream}" in listeners["listeners"]
    assert f"PROXIED://{broker.proxied_bootstrap}" in listeners["advertised.listeners"]
    assert f"PLAINTEXT://{broker.bootstrap_servers}" in listeners["advertised.listeners"]
    assert "PROXIED:PLAINTEXT" in listeners["listener.security.protocol.map"]
