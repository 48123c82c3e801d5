"""A TCP proxy in front of the kube-apiserver that can cut one process off.

Pods under the pod runner have no network namespace, so a pod cannot be cut off
by a firewall. Instead the pods' ``KUBERNETES_SERVICE_PORT`` points here (the pod's
``env`` wins over the runner's service variables; the apiserver's certificate is
for 127.0.0.1, so TLS verifies as before) and every connection is relayed,
byte for byte, to the apiserver. :meth:`ApiProxy.cut` closes the connections of one
process (found as Linux does: the client socket's inode in ``/proc/net/tcp``,
held by ``/proc/<pid>/fd``) and refuses its new ones; :meth:`heal` lets it in again.
The other pods keep their connections: only the one worker is partitioned.
"""

from __future__ import annotations

import os
import socket
import threading
from contextlib import suppress

from segue.stack.process import free_port


def tcp_connections(pid: int) -> list[tuple[int, int, str]]:
    """(local port, remote port, state) of each 127.0.0.1 TCP connection of process
    ``pid`` (Linux: its socket inodes in ``/proc/<pid>/fd``, found in ``/proc/net/tcp``;
    state ``01`` is ESTABLISHED)."""
    inodes = set()
    with suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
    found = []
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            if fields[9] in inodes:
                local, remote = (int(f.split(":")[1], 16) for f in fields[1:3])
                found.append((local, remote, fields[3]))
    return found


def _client_ports(pid: int, proxy_port: int) -> set[int]:
    """Local ports of ``pid``'s TCP connections to 127.0.0.1:``proxy_port``."""
    return {local for local, remote, _ in tcp_connections(pid) if remote == proxy_port}


class ApiProxy(threading.Thread):
    """Relays 127.0.0.1:``port`` to ``host``:``target_port``; see the module's doc."""

    def __init__(self, host: str, target_port: int) -> None:
        super().__init__(daemon=True)
        self.target = (host, target_port)
        self.port = free_port("127.0.0.1")
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.lock = threading.Lock()
        self.pairs: dict[int, tuple[socket.socket, socket.socket]] = {}  # client port ->
        self.cut_pid: int | None = None
        self.refused = 0  # connections refused from the cut process
        self.closing = False

    def run(self) -> None:
        while not self.closing:
            try:
                client, (_, port) = self.server.accept()
            except OSError:
                return
            if self._is_cut(port):
                self.refused += 1
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self.lock:
                self.pairs[port] = (client, upstream)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b, port), daemon=True).start()

    def _is_cut(self, port: int) -> bool:
        pid = self.cut_pid
        return pid is not None and port in _client_ports(pid, self.port)

    def _pump(self, source: socket.socket, sink: socket.socket, port: int) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        self._drop(port)

    def _drop(self, port: int) -> None:
        with self.lock:
            pair = self.pairs.pop(port, None)
        for sock in pair or ():
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self, pid: int) -> int:
        """Cut process ``pid`` off: close its connections now, refuse its new ones.
        Returns how many connections were closed."""
        self.cut_pid = pid
        ports = _client_ports(pid, self.port)
        with self.lock:
            mine = [p for p in self.pairs if p in ports]
        for port in mine:
            self._drop(port)
        return len(mine)

    def heal(self) -> None:
        self.cut_pid = None

    def close(self) -> None:
        self.closing = True
        self.server.close()
        with self.lock:
            ports = list(self.pairs)
        for port in ports:
            self._drop(port)
