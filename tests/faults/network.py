"""What the network fault needs around the harness: the proxied broker and its proxy,
where a process's connections go, and a log of what the StreamApp's status says.

The broker is the test's own (``ProxiedKafkaBroker``, with the ``PROXIED`` listener
advertised at Toxiproxy's port; docs/local-stack.md "A proxy in the path"), so the
session's broker keeps its configuration; the status log samples
``status.conditions``, ``status.members[].errors`` and readiness every half second,
so that what the operator said during a fault is still known after it has cleared.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from segue.stack.apps import Apps
from segue.stack.kafka_proxied import ProxiedKafkaBroker
from segue.stack.paths import Binaries
from segue.stack.toxiproxy import Proxy, Toxiproxy

from .proxy import tcp_connections


@contextmanager
def proxied_broker(workdir: Path, binaries: Binaries) -> Iterator[tuple[ProxiedKafkaBroker, Proxy]]:
    """A broker of its own with Toxiproxy relaying ``proxied_bootstrap`` to its
    ``PROXIED`` listener; a part that cannot start fails the test (never a skip)."""
    broker = ProxiedKafkaBroker(workdir / "kafka", binaries)
    toxiproxy = Toxiproxy(workdir)
    try:
        toxiproxy.start()
        broker.start()
        proxy = toxiproxy.proxy("kafka", broker.proxy_port, broker.proxied_upstream)
    except Exception as exc:
        broker.stop()
        toxiproxy.stop()
        pytest.fail(f"the proxied broker could not start: {exc}", pytrace=False)
    try:
        yield broker, proxy
    finally:
        broker.stop()
        toxiproxy.stop()


def remote_ports(pid: int) -> set[int]:
    """The 127.0.0.1 ports process ``pid`` has established TCP connections to."""
    return {remote for _, remote, state in tcp_connections(pid) if state == "01"}


class StatusLog(threading.Thread):
    """Every distinct thing the app's status said, with when it was first said
    (monotonic): a condition as ``Type=Status/Reason: message``, a member's task
    error as ``member task Reason: message``, a member not ready as ``member not ready``."""

    def __init__(self, apps: Apps, name: str, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.apps, self.name, self.interval = apps, name, interval
        self.seen: dict[str, float] = {}
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(self.interval):
            with suppress(Exception):  # the API may be slow; the next look reads it
                self._look(time.monotonic())

    def _look(self, now: float) -> None:
        status = self.apps.status(self.name)
        said = [f"{c.type}={c.status}/{c.reason}: {c.message}" for c in status.conditions or []]
        for m in status.members or []:
            said += [f"{m.name} {e.task} {e.reason}: {e.message}" for e in m.errors or []]
            if not m.ready:
                said.append(f"{m.name} not ready")
        for text in said:
            self.seen.setdefault(text, now)

    def since(self, moment: float) -> list[tuple[float, str]]:
        """What was first said at or after ``moment``: (seconds after it, text)."""
        return sorted((t - moment, s) for s, t in list(self.seen.items()) if t >= moment)


def window_stall(advances: dict[str, list[float]], start: float, end: float) -> float:
    """The longest any partition went without an advance inside [start, end]."""
    worst = 0.0
    for times in advances.values():
        points = [start, *(t for t in times if start < t < end), end]
        worst = max(worst, *(b - a for a, b in itertools.pairwise(points)))
    return worst
