"""The pod runner's addresses on this machine: routable ones on ``lo`` where it may add
them (root here and in CI), the loopback block otherwise, and nothing left behind."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from segue.stack.kubelet import ipam


def on_lo() -> set[str]:
    shown = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", "dev", "lo"], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[3].split("/")[0] for line in shown.splitlines()}


def test_pods_get_addresses_the_api_server_proxies_to_where_the_runner_may_add_them() -> None:
    chosen = ipam.choose()
    if os.geteuid() != 0:  # no CAP_NET_ADMIN: the loopback block, said in the log
        assert type(chosen) is ipam.LoopbackIpam
        return
    assert isinstance(chosen, ipam.LinkIpam)
    taken = [chosen.allocate() for _ in range(3)]
    try:
        assert len(set(taken)) == 3, taken
        assert all(a.startswith("198.1") for a in taken), taken
        assert set(taken) <= on_lo(), on_lo()
        with socket.socket() as server:  # a pod's process can listen on its own
            server.bind((taken[0], 0))
            server.listen()
            with socket.create_connection(server.getsockname(), timeout=5):
                pass
        chosen.release(taken[0])
        assert taken[0] not in on_lo()
    finally:
        chosen.release_all()
    assert not set(taken) & on_lo(), on_lo()


def test_an_address_already_on_lo_is_not_handed_out() -> None:
    if os.geteuid() != 0:  # without the right to add them, none is handed out at all
        with pytest.raises(RuntimeError, match="no free pod address"):
            ipam.LinkIpam("198.18.7.1", "198.18.7.2").allocate()
        return
    first = ipam.LinkIpam("198.18.7.1", "198.18.7.2")
    second = ipam.LinkIpam("198.18.7.1", "198.18.7.2")
    try:
        mine = first.allocate()
        theirs = second.allocate()
        assert mine != theirs, (mine, theirs)
    finally:
        first.release_all()
        second.release_all()
    assert not {"198.18.7.1", "198.18.7.2"} & on_lo()
