"""Leader election against the real API server's Lease objects: one holder at a time,
a silent holder waited out for exactly the lease duration (by the candidate's clock),
a released lease taken at once, and a leader that cannot renew told to stop."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kubernetes import client

from segue.operator.election import LeaseElector
from segue.operator.settings import LeaderElection

pytestmark = pytest.mark.timeout(120)
LEASE = 3  # seconds
RETRY = 0.2


def elector(kube_api: Any, namespace: str, identity: str) -> LeaseElector:
    config = LeaderElection(
        enabled=True,
        lease_name="segue-operator",
        lease_namespace=namespace,
        identity=identity,
        lease_duration=LEASE,
        renew_deadline=2.0,
        retry_period=RETRY,
    )
    return LeaseElector(kube_api, config)


def lease(kube_api: Any, namespace: str) -> Any:
    return client.CoordinationV1Api(kube_api).read_namespaced_lease("segue-operator", namespace)


def test_one_holder_a_silent_one_is_waited_out_a_released_one_taken_at_once(
    kube_api: Any, namespace: str
) -> None:
    a, b = elector(kube_api, namespace, "a"), elector(kube_api, namespace, "b")
    assert a.try_acquire_or_renew()
    assert a.is_leader()
    stop_a = threading.Event()
    a.keep(stop_a, on_lost=lambda: pytest.fail("a lost a lease it was renewing"))
    # While a renews, b never gets it, however long it tries.
    deadline = time.monotonic() + LEASE + 1
    while time.monotonic() < deadline:
        assert not b.try_acquire_or_renew()
        time.sleep(RETRY)
    assert b.holder == "a"
    assert lease(kube_api, namespace).spec.holder_identity == "a"

    # a dies without a word: b takes over once it has seen no renewal for LEASE seconds.
    stop_a.set()
    time.sleep(RETRY * 2)  # a's renewer has stopped
    silent_since = time.monotonic()
    assert b.acquire(threading.Event())
    waited = time.monotonic() - silent_since
    assert LEASE - 2 * RETRY - 0.5 <= waited <= LEASE + 3 * RETRY + 1.0, waited
    spec = lease(kube_api, namespace).spec
    assert (spec.holder_identity, spec.lease_transitions) == ("b", 1)
    assert not a.try_acquire_or_renew()  # a came back: b holds it, renewed just now

    # b steps down cleanly: a need not wait.
    b.release()
    assert lease(kube_api, namespace).spec.holder_identity is None
    started = time.monotonic()
    assert a.acquire(threading.Event())
    assert time.monotonic() - started < 1.0
    assert lease(kube_api, namespace).spec.lease_transitions == 2


def test_a_leader_that_cannot_renew_is_told_to_stop_before_the_lease_can_pass(
    kube_api: Any, namespace: str
) -> None:
    a = elector(kube_api, namespace, "a")
    assert a.try_acquire_or_renew()
    lost = threading.Event()
    a.keep(threading.Event(), on_lost=lost.set)
    # Someone else overwrites the lease (as a partitioned leader would see the world
    # move on without it): a's renewals now fail.
    api = client.CoordinationV1Api(kube_api)
    current = lease(kube_api, namespace)
    current.spec.holder_identity = "intruder"
    api.replace_namespaced_lease("segue-operator", namespace, current)
    took = time.monotonic()
    assert lost.wait(10), "the leader was never told it lost the lease"
    took = time.monotonic() - took
    assert took <= 2.0 + 2 * RETRY + 1.0, took  # the renew deadline, not the lease's
    assert not a.is_leader()
