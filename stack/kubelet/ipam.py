"""The addresses the pod runner gives its pods.

A pod needs an address of its own that the machine answers on. All of 127/8 reaches
``lo`` on Linux with nothing configured (:class:`LoopbackIpam`), but the API server
refuses to proxy to a loopback address (``pods/proxy``: ``address not allowed``), and
``segue status`` reads pods' metrics through that proxy, as it must on a real cluster.
So where the runner may add addresses to ``lo`` (root, or ``CAP_NET_ADMIN``, with
iproute2's ``ip``), each pod gets one of 198.18.0.0/15 instead (:class:`LinkIpam`,
RFC 2544's benchmarking block: no real network uses it), added as a /32 when the pod
starts and removed when it is gone. :func:`choose` picks, once per runner.
``sandbox`` allocates one per pod instance and releases it.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import shutil
import subprocess
import threading

log = logging.getLogger(__name__)

BLOCKS = (ipaddress.ip_network("127.0.0.0/16"), ipaddress.ip_network("198.18.0.0/15"))


def is_pod_address(address: str) -> bool:
    """Whether ``address`` is one a runner hands to pods (not the host's own)."""
    ip = ipaddress.ip_address(address)
    return any(ip in block for block in BLOCKS) and not address.startswith(("127.0.0.", "127.0.1."))


class LoopbackIpam:
    """Pod IPs 127.0.x.y, handed out round-robin from a random start (so two
    runners on one machine rarely collide, and a freed address is not reused at
    once). 127.0.0.x and 127.0.1.x (the host's own names) are never used."""

    def __init__(self, first: str = "127.0.2.1", last: str = "127.0.255.254") -> None:
        self._first = int(ipaddress.IPv4Address(first))
        self._size = int(ipaddress.IPv4Address(last)) - self._first + 1
        self._cursor = random.randrange(self._size)
        self._used: set[int] = set()
        self._lock = threading.Lock()

    def allocate(self) -> str:
        with self._lock:
            for _ in range(self._size):
                address = self._first + self._cursor
                self._cursor = (self._cursor + 1) % self._size
                if address % 256 in (0, 255) or address in self._used:
                    continue
                text = str(ipaddress.IPv4Address(address))
                if not self._claim(text):
                    continue
                self._used.add(address)
                return text
        raise RuntimeError("no free pod address left")

    def release(self, address: str) -> None:
        with self._lock:
            if int(ipaddress.IPv4Address(address)) in self._used:
                self._used.discard(int(ipaddress.IPv4Address(address)))
                self._free(address)

    def release_all(self) -> None:
        with self._lock:
            for address in sorted(self._used):
                self._free(str(ipaddress.IPv4Address(address)))
            self._used.clear()

    def _claim(self, address: str) -> bool:
        """Make ``address`` the machine's; False if another runner holds it."""
        return True

    def _free(self, address: str) -> None:
        """Give ``address`` back to the machine."""


class LinkIpam(LoopbackIpam):
    """Pod IPs from 198.18.0.0/15, each added to ``lo`` as a /32 while its pod lives:
    the API server proxies to them. An address already on ``lo`` (another runner's,
    or one a killed runner left) is skipped."""

    def __init__(self, first: str = "198.18.0.1", last: str = "198.19.255.254") -> None:
        super().__init__(first, last)

    def _claim(self, address: str) -> bool:
        return _ip("add", address)

    def _free(self, address: str) -> None:
        _ip("del", address)


def _ip(verb: str, address: str) -> bool:
    done = subprocess.run(
        ["ip", "addr", verb, f"{address}/32", "dev", "lo"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0 and verb == "del":
        log.warning("could not remove pod address %s from lo: %s", address, done.stderr.strip())
    return done.returncode == 0


def choose() -> LoopbackIpam:
    """:class:`LinkIpam` where this process may add addresses to ``lo``, else
    :class:`LoopbackIpam` (said once: pods' metrics are then unread by ``segue status``)."""
    probe = "198.18.0.0"  # the block's network address: never a pod's
    if shutil.which("ip") and _ip("add", probe):
        _ip("del", probe)
        return LinkIpam()
    log.warning(
        "pods get 127.0.x.y addresses: adding addresses to lo needs root or CAP_NET_ADMIN "
        "and iproute2's ip; the API server will not proxy to them, so segue status shows "
        "pods' metrics as unread (docs/pod-runner.md)"
    )
    return LoopbackIpam()
