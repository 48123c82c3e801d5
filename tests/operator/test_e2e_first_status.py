"""A ready operator answers a new StreamApp at once (issue 23, item 4).

The replica that acts says Ready only once Kopf watches; from then on a StreamApp gets
a status before the operator's first look, which waits on Kafka: here Kafka is not
there at all, so that look takes the whole ``--kafka-timeout`` and the first status
(``Pending``, ``Balanced`` ``Unknown``, ``Observing``, naming the brokers) is all there
is until ``Degraded`` ``KafkaUnavailable`` follows. The operator watches one namespace
(``--namespace``), the mode in which Kopf once spent ~54 s before watching anything.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.stack.apps import Apps
from segue.stack.process import free_port

from .e2e import OperatorProcess, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
NOWHERE = "127.0.0.1:9"  # the discard port: nothing listens there


@pytest.fixture
def probed(
    kube: Any, namespace: str, tmp_path: Path, streamapp_crd: Any
) -> Iterator[tuple[OperatorProcess, int]]:
    port = free_port()
    proc = OperatorProcess(
        kube.kubeconfig, namespace, tmp_path, "--health-port", str(port), "--kafka-timeout", "8"
    ).start()
    yield proc, port
    proc.stop()


def readyz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as reply:
            return reply.status, reply.read().decode().strip()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode().strip()
    except OSError as exc:
        return 0, str(exc)


def test_a_new_app_has_a_status_before_the_first_look_ends(
    probed: tuple[OperatorProcess, int], apps: Apps, manifest: Callable[..., dict[str, Any]]
) -> None:
    operator, port = probed
    seen: list[tuple[int, str]] = []

    def ready() -> bool:
        seen.append(readyz(port))
        return seen[-1] == (200, "running")

    wait_for("the operator Ready", ready, 60, lambda: f"{operator.logs()[-3000:]}\n{seen[-5:]}")
    assert all(code != 200 for code, _ in seen[:-1]), seen  # never Ready before that

    body = manifest("nokafka")
    body["spec"]["kafka"]["bootstrapServers"] = NOWHERE
    # A declared topology, so the first look asks Kafka for its topics at once (without
    # one it would wait for a worker to describe it and touch Kafka only then)
    body["spec"]["topology"] = {"subTopologies": [{"id": 0, "sourceTopics": ["text"]}]}
    applied = time.monotonic()
    apps.create(body)
    took = wait_for(
        "a first status", lambda: apps.condition("nokafka", "Balanced") is not None, 15,
        lambda: operator.logs()[-3000:],
    )  # fmt: skip
    observing = apps.condition("nokafka", "Balanced")
    assert observing is not None
    assert (observing.status, observing.reason) == ("Unknown", "Observing"), observing
    assert NOWHERE in observing.message, observing.message

    wait_for(
        "Degraded: KafkaUnavailable",
        lambda: (
            (c := apps.condition("nokafka", "Degraded")) is not None
            and c.reason == "KafkaUnavailable"
        ),
        60,
        lambda: operator.logs()[-3000:],
    )
    degraded = time.monotonic() - applied
    print(f"first status {took:.2f}s after the create, Degraded {degraded:.1f}s after")
