"""This process as one of the operator's replicas: its probes, its lease, and what it
waits for before it acts.

``segue operator`` (:mod:`.cli`) makes one :class:`Replica` before anything else, so the
probes answer from the start; :mod:`.election` holds the Lease, :mod:`.health` serves the
probes, and Kopf's ready flag (:meth:`Replica.ready`) says when the one that acts watches.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any

EXIT_LEASE_LOST = 3  # the process ends when the lease is lost; its pod restarts it


class Replica:
    """This process as one of the operator's replicas: its probes and its lease."""

    def __init__(self, api_client: Any, settings: Any) -> None:
        from segue.operator import health
        from segue.operator.election import LeaseElector
        from segue.operator.metricsapi.status_board import StatusBoard

        self.election = settings.leader_election
        self.elector = LeaseElector(api_client, self.election) if self.election.enabled else None
        self.stop, self.leading = threading.Event(), threading.Event()
        self.watching = threading.Event()  # Kopf has started (its ready flag)
        self.waits_for = ""  # what a leader that does not watch yet waits for
        self.signals: Any = None  # the SignalBoard, once this replica acts
        self.statuses = StatusBoard(api_client)  # what a standby answers from
        if settings.health_port:
            health.serve(settings.bind_address, settings.health_port, self.live, self.ready)

    def live(self) -> tuple[bool, str]:
        if self.elector and self.leading.is_set() and not self.elector.is_leader():
            return False, f"lease {self.election.lease_name} not renewed"
        return True, "ok"

    def ready(self) -> tuple[bool, str]:
        """A standby is ready (to take over); the one that acts once Kopf watches, so a
        ready leader is one that answers a new StreamApp at once."""
        if self.elector is not None and not self.elector.is_leader():
            return True, f"standby (leader: {self.elector.holder or 'none'})"
        if not self.watching.is_set():
            return False, f"starting: {self.waits_for or 'Kopf is not watching yet'}"
        return True, "leader" if self.elector is not None else "running"

    def await_crd(self, api_client: Any) -> bool:
        """Watching named namespaces, Kopf finds the StreamApp resource once, at start
        (:mod:`.handlers` says why): wait for its CRD first, saying so. False if told
        to stop first."""
        from kubernetes.client import ApiException, ApiextensionsV1Api

        from segue.operator.api import CRD_NAME

        crds = ApiextensionsV1Api(api_client)
        while not self.stop.is_set():
            try:
                crds.read_custom_resource_definition(CRD_NAME)
                self.waits_for = ""
                return True
            except ApiException as exc:
                if exc.status != 404:
                    raise
            if not self.waits_for:
                self.waits_for = (
                    f"the CRD {CRD_NAME} does not exist (kubectl apply -f crds/streamapp.yaml)"
                )
                logging.getLogger("segue.operator").warning("waiting: %s", self.waits_for)
            self.stop.wait(2.0)
        return False

    def board(self) -> tuple[Any, str]:
        """What the external metrics API answers from: the leader's own board, a
        standby's view of the leader's writes in the status, or why there is none."""
        if self.signals is not None:
            return self.signals, "leader"
        if self.elector is not None and not self.elector.is_leader():
            return self.statuses, f"standby (leader: {self.elector.holder or 'none'})"
        return None, "starting: the reconcile loops have not begun"

    def lead(self) -> bool:
        """Block until this replica may act; False if told to stop first."""
        if self.elector is None:
            self.leading.set()
            return True
        signal.signal(signal.SIGTERM, lambda *_: self.stop.set())  # Kopf sets its own later
        signal.signal(signal.SIGINT, lambda *_: self.stop.set())
        if not self.elector.acquire(self.stop):
            return False
        self.leading.set()
        self.elector.keep(self.stop, self._lost)
        return True

    def step_down(self) -> None:
        self.stop.set()
        if self.elector is not None:
            self.elector.release()

    def _lost(self) -> None:
        logging.getLogger("segue.operator").critical(
            "lost the leader lease: exiting so that only one operator acts"
        )
        logging.shutdown()
        os._exit(EXIT_LEASE_LOST)  # now, before the lease can pass to another replica
