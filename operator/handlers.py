"""Kopf wiring: one loop per StreamApp, woken early by changes to the app or its pods.

The operator's pods come from a watch-fed cache, a Kopf index (``app_pods``) keyed by
(namespace, app); Kopf fills it from its initial listing before any daemon starts, so a
step never decides from a half-known set of pods, and no step lists pods itself.

Each StreamApp gets a Kopf daemon, an async loop on Kopf's event loop, that hands
:class:`~.reconcile.Reconciler` steps to the operator's one :class:`~.steps.StepPool`
until the app is deleted: threads are bounded by the pool, not by the number of apps.
Between steps it sleeps as long as the decision core allows (short while something is
in flight, long when settled, never past a deadline), and watch events on the StreamApp
(``kubectl scale``, an HPA, an edit), on its pods or on a Kafka Streams app's group
ConfigMap (a report its plugin waits on) wake it at once, so a learner that catches up
is handed over on the next look, not after a probing interval; such a step, and any
step of an app with something in flight, goes ahead of settled apps' routine looks. No
handler writes anything itself: the daemon's step is the only writer, so every write
comes from one decision.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import kopf

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.observe import PodState, pod_state
from segue.operator.reconcile import Gone, Next, Reconciler
from segue.operator.settings import OperatorSettings
from segue.operator.steps import StepPool
from segue.protocol.names import APP_LABEL, MANAGED_BY, MANAGER, group_configmap

log = logging.getLogger("segue.operator")


class Wakeups:
    """An asyncio.Event per (namespace, app): set by watch events, waited on by loops
    (both run on Kopf's event loop)."""

    def __init__(self) -> None:
        self._events: defaultdict[tuple[str, str], asyncio.Event] = defaultdict(asyncio.Event)

    def get(self, namespace: str, name: str) -> asyncio.Event:
        return self._events[(namespace, name)]

    def wake(self, namespace: str | None, name: str | None) -> None:
        """Cut a running loop's wait short; an app without one (not started yet, or
        deleted: its pods' last events) has nothing to wake, and gets no entry."""
        event = self._events.get((namespace or "", name or ""))
        if event is not None:
            event.set()

    def forget(self, namespace: str, name: str) -> None:
        self._events.pop((namespace, name), None)


async def woken(wake: asyncio.Event, delay: float) -> bool:
    """Sleep ``delay`` seconds unless a watch event comes first; True if one did."""
    try:
        await asyncio.wait_for(wake.wait(), delay)
    except TimeoutError:
        return False
    finally:
        wake.clear()
    return True


def pods_of(
    index: kopf.Index[tuple[str, str], PodState], key: tuple[str, str]
) -> dict[str, PodState]:
    """A copy of one app's pods from the index (Kopf updates it from its event loop while a
    step's thread reads it)."""
    for _ in range(10):
        try:
            return {p.name: p for p in index.get(key, ())}
        except RuntimeError:  # changed while being copied: copy again
            continue
    raise RuntimeError(f"the pod index of {key} kept changing while being read")


@dataclass(frozen=True, kw_only=True)
class AppLoop:
    """One StreamApp's loop: a step on the pool, then a wait that a watch event cuts short."""

    reconciler: Reconciler
    steps: StepPool
    settings: OperatorSettings
    namespace: str
    name: str
    uid: str

    async def run(
        self,
        stopped: kopf.DaemonStopped,
        wake: asyncio.Event,
        app_pods: kopf.Index[tuple[str, str], PodState],
    ) -> None:
        namespace, name, reconciler = self.namespace, self.name, self.reconciler

        def step() -> Next:
            return reconciler.step(namespace, name, pods_of(app_pods, (namespace, name)))

        log.info("%s/%s: reconcile loop started", namespace, name)
        running: Future[Next] | None = None
        urgent = True  # the first look
        try:
            while not stopped:
                running = self.steps.submit(step, urgent)
                try:
                    after: Next = await self.finished(running, wake, urgent)
                    delay, busy = after
                except Gone:
                    break
                except Exception as exc:  # one bad step must not end the loop
                    stage = type(exc).__name__
                    reconciler.metrics.errors.labels(namespace, name, stage).inc()
                    log.exception("%s/%s: reconcile step failed (%s)", namespace, name, stage)
                    delay, busy = self.settings.error_backoff, False
                urgent = await woken(wake, delay) or busy
        finally:
            if running is not None and not running.done():  # cancelled mid-step
                running.add_done_callback(lambda _: reconciler.forget(namespace, name, self.uid))
            else:
                reconciler.forget(namespace, name, self.uid)
        log.info("%s/%s: reconcile loop stopped", namespace, name)

    async def finished(self, running: Future[Next], wake: asyncio.Event, urgent: bool) -> Next:
        """The step's result; a watch event while a routine step still queues makes it
        urgent (it has not read anything yet, so the event is its to answer)."""
        done: asyncio.Future[Any] = asyncio.wrap_future(running)
        if not urgent:
            woke: asyncio.Future[Any] = asyncio.ensure_future(wake.wait())
            try:
                await asyncio.wait([done, woke], return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                done.cancel()  # and the step with it, if it has not started
                raise
            finally:
                woke.cancel()
            if not done.done() and self.steps.promote(running):
                wake.clear()
        result: Next = await done
        return result


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
    steps = StepPool(operator_settings.step_workers, operator_settings.routine_looks)
    reconciler.metrics.watch_steps(steps.queued)

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
        # Watching named namespaces, Kopf would still list every namespace first, and
        # without the cluster-wide right to (namespaced mode has none) it retries that
        # for ~54 s before falling back to the names given: an app applied meanwhile had
        # no status for that long. The names are exact, so there is nothing to scan; the
        # StreamApp resource is found once at start (the CLI waits for its CRD first).
        settings.scanning.disabled = bool(operator_settings.namespaces)

    @kopf.on.cleanup(registry=registry)
    async def stop_steps(**_: Any) -> None:
        steps.close()

    @kopf.index("", "v1", "pods", id="app_pods", labels={MANAGED_BY: MANAGER}, registry=registry)
    async def app_pods(
        namespace: str | None, labels: Mapping[str, str], body: kopf.Body, **_: Any
    ) -> dict[tuple[str, str], PodState]:
        app = labels.get(APP_LABEL)
        return {(namespace, app): pod_state(body)} if namespace and app else {}

    @kopf.daemon(GROUP, VERSION, PLURAL, registry=registry, cancellation_timeout=10.0)
    async def run_app(
        stopped: kopf.DaemonStopped,
        namespace: str | None,
        name: str,
        uid: str,
        **kwargs: Any,
    ) -> None:
        assert namespace is not None  # StreamApps are namespaced
        app_pods: kopf.Index[tuple[str, str], PodState] = kwargs["app_pods"]  # the index above
        loop = AppLoop(
            reconciler=reconciler, steps=steps, settings=operator_settings,
            namespace=namespace, name=name, uid=uid,
        )  # fmt: skip
        await loop.run(stopped, wakeups.get(namespace, name), app_pods)
        wakeups.forget(namespace, name)

    @kopf.on.event(GROUP, VERSION, PLURAL, registry=registry)
    async def app_changed(namespace: str | None, name: str, **_: Any) -> None:
        wakeups.wake(namespace, name)

    @kopf.on.event("", "v1", "pods", labels={MANAGED_BY: MANAGER}, registry=registry)
    async def pod_changed(namespace: str | None, labels: Mapping[str, str], **_: Any) -> None:
        wakeups.wake(namespace, labels.get(APP_LABEL))

    @kopf.on.event(
        "",
        "v1",
        "configmaps",
        labels={MANAGED_BY: MANAGER},
        when=lambda name, labels, **_: name == group_configmap(labels.get(APP_LABEL, "")),
        registry=registry,
    )
    async def group_reported(namespace: str | None, labels: Mapping[str, str], **_: Any) -> None:
        """A Kafka Streams group leader reported: its plugin waits for the answer."""
        wakeups.wake(namespace, labels.get(APP_LABEL))

    return registry
