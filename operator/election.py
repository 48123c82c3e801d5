"""Leader election on a ``coordination.k8s.io`` Lease: of N operator replicas, one acts.

Kopf's peering only pauses an operator while another one is seen; it does not elect,
so two replicas started together would both act. This is client-go's
``leaderelection`` (what kube-controller-manager and controller-runtime use), kept to
what Segue needs:

* A candidate reads the Lease. It takes it when nobody holds it, or when the record
  has not changed for ``leaseDurationSeconds`` *as measured by its own clock since it
  first saw that record* (never by comparing the holder's timestamps with its own
  clock, so clock skew between nodes cannot elect two leaders).
* The leader renews every ``retry_period``. When it has not managed to renew for
  ``renew_deadline`` (< the lease duration) it must stop acting: :mod:`.cli` exits
  the process, as client-go's users do, and the pod restarts as a candidate.
* Every write carries the ``resourceVersion`` it was decided from, so two
  candidates racing for an expired lease cannot both win.
* A leader that stops cleanly releases the lease (holder cleared), so a standby
  takes over on its next try instead of waiting out the lease.

The assignment's own optimistic concurrency (:mod:`.act.apply`) stays as the second
line: even a leader that lost the lease unknowingly cannot publish over a generation it
did not read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client import CoordinationV1Api
from kubernetes.client.exceptions import ApiException

from segue.operator.api.status import to_timestamp
from segue.operator.settings import LeaderElection

log = logging.getLogger("segue.operator.election")


@dataclass(frozen=True)
class Record:
    """What a Lease says, compared as a whole to notice that the holder renewed."""

    holder: str
    duration: int
    acquired: str
    renewed: str
    transitions: int


class LeaseElector:
    def __init__(
        self,
        api_client: Any,
        config: LeaderElection,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # The client's typed stubs want model objects; it accepts the dicts we build.
        self.api: Any = CoordinationV1Api(api_client)
        self.config = config
        self.clock = clock
        self._observed: Record | None = None
        self._observed_at = 0.0
        self._renewed_at: float | None = None  # our clock, at our last successful write
        self._lock = threading.Lock()
        # Every call bounded: a renewal hung on a dead connection must not outlive the
        # renew deadline unnoticed.
        self._timeout = {"_request_timeout": config.retry_period}

    @property
    def identity(self) -> str:
        return self.config.identity

    @property
    def holder(self) -> str:
        """Who held the lease when last read ('' if nobody)."""
        return self._observed.holder if self._observed else ""

    def is_leader(self) -> bool:
        renewed = self._renewed_at
        return renewed is not None and self.clock() - renewed < self.config.renew_deadline

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True if this replica holds the lease afterwards."""
        with self._lock:
            try:
                return self._attempt()
            except ApiException as exc:
                log.warning("lease %s: %s %s", self._where(), exc.status, exc.reason)
            except Exception as exc:  # the API server unreachable, a timeout, ...
                log.warning("lease %s: %s", self._where(), exc)
            return False

    def acquire(self, stop: threading.Event) -> bool:
        """Block until leader (True) or ``stop`` is set (False)."""
        reported = None
        while not stop.is_set():
            if self.try_acquire_or_renew():
                log.info("lease %s: acquired by %s", self._where(), self.identity)
                return True
            if self.holder != reported:
                reported = self.holder
                log.info("lease %s: held by %s; standing by", self._where(), reported)
            stop.wait(min(self.config.retry_period, max(0.05, self._expires_in())))
        return False

    def _expires_in(self) -> float:
        """Seconds until the lease as last seen runs out (by our clock): try again right
        then rather than up to a retry period later."""
        if self._observed is None:
            return self.config.retry_period
        return self._observed_at + self._observed.duration - self.clock()

    def keep(self, stop: threading.Event, on_lost: Callable[[], None]) -> threading.Thread:
        """Renew in a thread until ``stop``; ``on_lost()`` once renewing failed too long."""

        def renew() -> None:
            while not stop.wait(self.config.retry_period):
                if self.try_acquire_or_renew():
                    continue
                if not self.is_leader():
                    log.error(
                        "lease %s: not renewed for %.1fs (held by %r now)",
                        self._where(),
                        self.config.renew_deadline,
                        self.holder,
                    )
                    on_lost()
                    return

        thread = threading.Thread(target=renew, name="lease-renewer", daemon=True)
        thread.start()
        return thread

    def release(self) -> None:
        """Give the lease up if still ours, so a standby need not wait it out."""
        with self._lock:
            try:
                lease = self.api.read_namespaced_lease(
                    self.config.lease_name, self.config.lease_namespace, **self._timeout
                )
                if (lease.spec.holder_identity or "") != self.identity:
                    return
                body = self._body(lease.metadata.resource_version, "", 1, lease.spec)
                self.api.replace_namespaced_lease(
                    self.config.lease_name, self.config.lease_namespace, body, **self._timeout
                )
                self._renewed_at = None
                log.info("lease %s: released by %s", self._where(), self.identity)
            except Exception as exc:  # best effort: the lease expires anyway
                log.warning("lease %s: could not release: %s", self._where(), exc)

    def _attempt(self) -> bool:
        name, namespace = self.config.lease_name, self.config.lease_namespace
        try:
            lease = self.api.read_namespaced_lease(name, namespace, **self._timeout)
        except ApiException as exc:
            if exc.status != 404:
                raise
            return self._create()
        spec = lease.spec
        record = Record(
            holder=spec.holder_identity or "",
            duration=int(spec.lease_duration_seconds or self.config.lease_duration),
            acquired=str(spec.acquire_time),
            renewed=str(spec.renew_time),
            transitions=int(spec.lease_transitions or 0),
        )
        now = self.clock()
        if record != self._observed:
            self._observed, self._observed_at = record, now
        ours = record.holder == self.identity
        if record.holder and not ours and now - self._observed_at < record.duration:
            return False  # held, and renewed within its duration as we see it
        body = self._body(lease.metadata.resource_version, self.identity, None, spec)
        try:
            self.api.replace_namespaced_lease(name, namespace, body, **self._timeout)
        except ApiException as exc:
            if exc.status == 409:  # another candidate wrote first
                return False
            raise
        self._written(now)
        return True

    def _create(self) -> bool:
        stamp = to_timestamp(time.time())
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.lease_name},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.config.lease_duration,
                "acquireTime": stamp,
                "renewTime": stamp,
                "leaseTransitions": 0,
            },
        }
        try:
            self.api.create_namespaced_lease(self.config.lease_namespace, body, **self._timeout)
        except ApiException as exc:
            if exc.status == 409:
                return False
            raise
        self._written(self.clock())
        return True

    def _body(
        self, resource_version: str, holder: str, duration: int | None, spec: Any
    ) -> dict[str, Any]:
        stamp = to_timestamp(time.time())
        previous = spec.holder_identity or ""
        changed = previous != holder
        acquired = spec.acquire_time
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.lease_name, "resourceVersion": resource_version},
            "spec": {
                "holderIdentity": holder or None,
                "leaseDurationSeconds": duration or self.config.lease_duration,
                "acquireTime": stamp
                if changed or acquired is None
                else to_timestamp(acquired.timestamp()),
                "renewTime": stamp,
                "leaseTransitions": int(spec.lease_transitions or 0)
                + (1 if changed and holder else 0),
            },
        }

    def _written(self, now: float) -> None:
        self._renewed_at = now
        self._observed = None  # our own write: re-read it as a fresh record next time

    def _where(self) -> str:
        return f"{self.config.lease_namespace}/{self.config.lease_name}"
