"""``kubectl logs`` against the local stack: the real kubectl asks the real apiserver,
which dials the pod runner's ``containerLogs`` endpoint (segue.stack.kubelet.logs) on
the port the Node publishes, with its kubelet client certificate. Plain, ``--tail``,
``--previous`` after a restart, and ``-f`` that sees lines written after it started;
a client without a cluster certificate is refused."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from kubernetes import client

from segue.stack.paths import Binaries

pytestmark = pytest.mark.smoke

FOLLOW = ("logs", "talker", "-f", "-n")
SCRIPT = """
import sys, time
for i in range(3):
    print(f"line {i}", flush=True)
if sys.argv[1] == "crash" and not __import__("os").path.exists("crashed"):
    open("crashed", "w").close()
    sys.exit(3)
i = 3
while True:
    time.sleep(0.3)
    print(f"line {i}", flush=True)
    i += 1
"""


def kubectl(kube: Any, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Binaries.locate().kubectl), "--kubeconfig", str(kube.kubeconfig), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def wait_for(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.2)


def pod(name: str, mode: str) -> dict[str, Any]:
    command = [sys.executable, "-c", textwrap.dedent(SCRIPT), mode]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "talk", "image": "unused", "command": command}],
            "restartPolicy": "Always",
        },
    }


def restarts(core: Any, namespace: str, name: str) -> int:
    statuses = core.read_namespaced_pod(name, namespace).status.container_statuses or []
    return sum(s.restart_count for s in statuses)


def test_kubectl_logs_plain_tail_previous_and_follow(
    kube: Any, kube_api: Any, pod_runner: Any, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_pod(namespace, pod("talker", "crash"))
    wait_for(lambda: restarts(core, namespace, "talker") >= 1)
    wait_for(lambda: "line 4" in kubectl(kube, "logs", "-n", namespace, "talker").stdout)

    plain = kubectl(kube, "logs", "-n", namespace, "talker")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("line 0\nline 1\nline 2\nline 3\n"), plain.stdout

    tail = kubectl(kube, "logs", "-n", namespace, "talker", "--tail=1")
    assert tail.returncode == 0, tail.stderr
    assert len(tail.stdout.splitlines()) == 1, tail.stdout
    assert tail.stdout.startswith("line "), tail.stdout

    previous = kubectl(kube, "logs", "-n", namespace, "talker", "--previous")
    assert previous.returncode == 0, previous.stderr
    assert previous.stdout == "line 0\nline 1\nline 2\n"  # the run that exited 3

    missing = kubectl(kube, "logs", "-n", namespace, "talker", "-c", "nope")
    assert missing.returncode != 0

    follow = subprocess.Popen(
        [str(Binaries.locate().kubectl), "--kubeconfig", str(kube.kubeconfig), *FOLLOW, namespace],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert follow.stdout is not None
        seen = [follow.stdout.readline() for _ in range(12)]  # blocks for the new lines
    finally:
        follow.kill()
        follow.wait(10)
    numbers = [int(line.split()[1]) for line in seen]
    assert numbers == list(range(numbers[0], numbers[0] + 12)), seen
    assert numbers[0] == 0  # from the start of the current run, then streamed


def test_the_log_endpoint_wants_a_cluster_client_certificate(pod_runner: Any) -> None:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    address = (pod_runner.host_ip, pod_runner.kubelet_port)
    try:
        with (
            socket.create_connection(address, timeout=10) as raw,
            context.wrap_socket(raw) as tls,
        ):
            tls.sendall(b"GET /containerLogs/default/x/y HTTP/1.0\r\n\r\n")
            answer = tls.recv(100)
    except (ssl.SSLError, ConnectionError):
        answer = b""  # the handshake refused
    assert answer == b"", answer  # no certificate, no answer
