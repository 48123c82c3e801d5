"""Kopf wiring: one loop per StreamApp, woken early by changes to the app or its pods.

The operator's pods come from a watch-fed cache, a Kopf index (``app_pods``) keyed by
(namespace, app); Kopf fills it from its initial listing before any daemon starts, so a
step never decides from a half-known set of pods, and no step lists pods itself.

Each StreamApp gets a Kopf daemon (a thread) that runs :class:`~.reconcile.Reconciler`
steps until the app is deleted. Between steps it sleeps as long as the decision core
allows (short while something is in flight, long when settled, never past a deadline),
and watch events on the StreamApp (``kubectl scale``, an HPA, an edit), on its pods
or on a Kafka Streams app's group ConfigMap (a report its plugin waits on) wake it at
once, so a learner that catches up is handed over on the next look, not after a probing
interval. No handler writes anything itself: the daemon's step is the
only writer, so every write comes from one decision.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import kopf

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.observe import PodState, pod_state
from segue.operator.reconcile import Gone, Reconciler
from segue.operator.settings import OperatorSettings
from segue.protocol.names import APP_LABEL, MANAGED_BY, MANAGER, group_configmap

log = logging.getLogger("segue.operator")

# Kopf runs sync handlers and sync daemons in one ThreadPoolExecutor, by default of
# min(32, CPUs + 4) threads, and each app's daemon holds its thread for the app's life:
# with more apps than that, the rest never start, and the pod index and the wake-up
# handlers, which need a thread too, starve, so no app settles (bench/fleet: 6 threads
# on 2 cores, 0 of 10 apps Balanced). The pool starts a thread only when none is idle,
# so a high cap costs nothing up front: it is one thread per app plus the few handlers
# running at once.
MAX_THREADS = 10_000


class Wakeups:
    """A threading.Event per (namespace, app): set by watch events, waited on by loops."""

    def __init__(self) -> None:
        self._events: defaultdict[tuple[str, str], threading.Event] = defaultdict(threading.Event)
        self._lock = threading.Lock()

    def get(self, namespace: str, name: str) -> threading.Event:
        with self._lock:
            return self._events[(namespace, name)]

    def wake(self, namespace: str | None, name: str | None) -> None:
        if namespace and name:
            self.get(namespace, name).set()


def pods_of(
    index: kopf.Index[tuple[str, str], PodState], key: tuple[str, str]
) -> dict[str, PodState]:
    """A copy of one app's pods from the index (Kopf updates it from its own thread)."""
    for _ in range(10):
        try:
            return {p.name: p for p in index.get(key, ())}
        except RuntimeError:  # changed while being copied: copy again
            continue
    raise RuntimeError(f"the pod index of {key} kept changing while being read")


def connection_info(api_client: Any) -> kopf.ConnectionInfo:
    """Kopf logs in exactly as the reconciler's client does (kubeconfig or ServiceAccount)."""
    config = api_client.configuration
    header = config.get_api_key_with_prefix("BearerToken") or config.get_api_key_with_prefix(
        "authorization"
    )
    scheme, _, token = (header or "").rpartition(" ")
    return kopf.ConnectionInfo(
        server=config.host,
        ca_path=config.ssl_ca_cert,
        insecure=not config.verify_ssl,
        scheme=scheme or None,
        token=token or None,
        certificate_path=config.cert_file,
        private_key_path=config.key_file,
    )


def build_registry(
    reconciler: Reconciler, operator_settings: OperatorSettings
) -> kopf.OperatorRegistry:
    """Kopf's handlers for one operator; Kopf hands its own settings to ``configure``."""
    registry = kopf.OperatorRegistry()
    wakeups = Wakeups()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return connection_info(reconciler.api_client)

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.peering.standalone = True  # leader election comes with the Helm chart
        settings.persistence.finalizer = f"{GROUP}/operator"
        settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
        settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
            prefix=GROUP, key="last-handled-configuration"
        )
        settings.watching.server_timeout = 120
        settings.posting.level = logging.WARNING
        settings.execution.max_workers = MAX_THREADS  # one thread per app: see MAX_THREADS
        # Watching named namespaces, Kopf would still list every namespace first, and
        # without the cluster-wide right to (namespaced mode has none) it retries that
        # for ~54 s before falling back to the names given: an app applied meanwhile had
        # no status for that long. The names are exact, so there is nothing to scan; the
        # StreamApp resource is found once at start (the CLI waits for its CRD first).
        settings.scanning.disabled = bool(operator_settings.namespaces)

    @kopf.index("", "v1", "pods", id="app_pods", labels={MANAGED_BY: MANAGER}, registry=registry)
    def app_pods(
        namespace: str | None, labels: Mapping[str, str], body: kopf.Body, **_: Any
    ) -> dict[tuple[str, str], PodState]:
        app = labels.get(APP_LABEL)
        return {(namespace, app): pod_state(body)} if namespace and app else {}

    @kopf.daemon(GROUP, VERSION, PLURAL, registry=registry, cancellation_timeout=10.0)
    def run_app(
        stopped: kopf.DaemonStopped,
        namespace: str | None,
        name: str,
        uid: str,
        **kwargs: Any,
    ) -> None:
        assert namespace is not None  # StreamApps are namespaced
        app_pods: kopf.Index[tuple[str, str], PodState] = kwargs["app_pods"]  # the index above
        wake = wakeups.get(namespace, name)
        log.info("%s/%s: reconcile loop started", namespace, name)
        while not stopped:
            try:
                delay = reconciler.step(namespace, name, pods_of(app_pods, (namespace, name)))
            except Gone:
                break
            except Exception as exc:  # one bad step must not end the loop
                stage = type(exc).__name__
                reconciler.metrics.errors.labels(namespace, name, stage).inc()
                log.exception("%s/%s: reconcile step failed (%s)", namespace, name, stage)
                delay = operator_settings.error_backoff
            wake.wait(delay)
            wake.clear()
        reconciler.forget(namespace, name, uid)
        log.info("%s/%s: reconcile loop stopped", namespace, name)

    @kopf.on.event(GROUP, VERSION, PLURAL, registry=registry)
    def app_changed(namespace: str | None, name: str, **_: Any) -> None:
        wakeups.wake(namespace, name)

    @kopf.on.event("", "v1", "pods", labels={MANAGED_BY: MANAGER}, registry=registry)
    def pod_changed(namespace: str | None, labels: Mapping[str, str], **_: Any) -> None:
        wakeups.wake(namespace, labels.get(APP_LABEL))

    @kopf.on.event(
        "",
        "v1",
        "configmaps",
        labels={MANAGED_BY: MANAGER},
        when=lambda name, labels, **_: name == group_configmap(labels.get(APP_LABEL, "")),
        registry=registry,
    )
    def group_reported(namespace: str | None, labels: Mapping[str, str], **_: Any) -> None:
        """A Kafka Streams group leader reported: its plugin waits for the answer."""
        wakeups.wake(namespace, labels.get(APP_LABEL))

    return registry
