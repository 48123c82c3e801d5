"""One reconcile step of one StreamApp: observe, decide, act. The imperative shell.

Everything the step needs is read fresh (the StreamApp, its pods and their metrics,
the published assignment with its resourceVersion, Kafka's partition counts and
changelog end offsets), so a step may be repeated or interrupted anywhere: the next
one decides again from the world as it is. Acts run in a safe order: publish the
generation (over the version decided from), create claims and pods, delete pods and
claims, then write status and events. ``handlers`` runs this in a loop per app.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from kubernetes.client import CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api
from kubernetes.client.exceptions import ApiException

from segue.operator.act import apply, objects, recorder
from segue.operator.act.status_patch import (
    build_status,
    condition,
    conditions_from_status,
    memory_from_status,
    status_patch,
)
from segue.operator.api import GROUP, PLURAL, VERSION, InvalidStreamApp, StreamApp
from segue.operator.api.names import claim
from segue.operator.api.status import StreamAppStatus, find_condition
from segue.operator.metrics import OperatorMetrics
from segue.operator.scaling import Condition, Plan, World, decide
from segue.operator.settings import OperatorSettings
from segue.operator.world import Observer, credentials, pod_obs, policy, read_assignment
from segue.protocol import DocumentError

log = logging.getLogger("segue.operator")


@dataclass(frozen=True)
class Target:
    namespace: str
    name: str
    app: StreamApp
    obj: dict[str, Any]
    secret_keys: list[str]


class Gone(Exception):
    """The StreamApp was deleted."""


class Reconciler:
    def __init__(
        self, api_client: Any, settings: OperatorSettings, metrics: OperatorMetrics
    ) -> None:
        self.api_client = api_client
        self.core = CoreV1Api(api_client)
        self.rbac = RbacAuthorizationV1Api(api_client)
        self.custom = CustomObjectsApi(api_client)
        self.settings = settings
        self.metrics = metrics
        self.observer = Observer(self.core, settings)
        self._access: set[tuple[str, int]] = set()  # (uid, generation) with RBAC ensured

    def forget(self, uid: str) -> None:
        """The app's loop ended: drop its cached topology and access records."""
        self._access = {a for a in self._access if a[0] != uid}
        self.observer.forget(uid)

    def step(self, namespace: str, name: str) -> float:
        """One step; the seconds to wait before the next. Raises :class:`Gone`."""
        started = time.monotonic()
        try:
            obj: dict[str, Any] = self.custom.get_namespaced_custom_object(  # type: ignore[assignment]
                GROUP, VERSION, namespace, PLURAL, name
            )
        except ApiException as exc:
            if exc.status == 404:
                raise Gone(f"{namespace}/{name}") from exc
            raise
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            raise Gone(f"{namespace}/{name} is being deleted")
        try:
            app = StreamApp.from_object(obj)
        except InvalidStreamApp as exc:
            self._refused(namespace, name, obj, "InvalidSpec", str(exc))
            return self.settings.idle_interval
        uid, generation = meta["uid"], int(meta.get("generation", 0))
        secret = credentials(self.core, namespace, app)
        if (uid, generation) not in self._access:
            apply.ensure_worker_access(
                self.core,
                self.rbac,
                namespace,
                [
                    objects.service_account(name, uid),
                    objects.role(name, uid),
                    objects.role_binding(name, uid, namespace),
                ],
            )
            self._access.add((uid, generation))
        try:
            world, assignment_rv = self._observe(namespace, name, app, obj, secret)
        except DocumentError as exc:
            # Never publish over a document this operator cannot read (a newer one wrote it?)
            self._refused(namespace, name, obj, "AssignmentUnreadable", str(exc))
            return self.settings.idle_interval
        plan = decide(world)
        target = Target(namespace, name, app, obj, sorted(secret))
        self._act(target, plan, assignment_rv, world.now)
        labels = (namespace, name)
        self.metrics.reconcile_seconds.labels(*labels).observe(time.monotonic() - started)
        wait = self.settings.busy_interval if plan.busy else self.settings.idle_interval
        if plan.wake_at is not None:
            wait = min(wait, max(0.05, plan.wake_at - time.time()))
        return wait

    def _observe(
        self, namespace: str, name: str, app: StreamApp, obj: dict[str, Any], secret: dict[str, str]
    ) -> tuple[World, str | None]:
        states, reports = self.observer.pods(namespace, app, name)
        assignment = read_assignment(self.core, namespace, name)
        key = f"{obj['metadata']['uid']}/{obj['metadata'].get('generation', 0)}"
        subs, topology_error = self.observer.topology(key, app, states, reports)
        view = self.observer.kafka(app.spec.kafka.bootstrap_servers, secret)
        topics = sorted({t for s in subs or () for t in (*s.source_topics, *s.changelog_topics)})
        partitions = view.partitions(topics) if topics else {}
        changelogs = {
            t: partitions[t] for s in subs or () for t in s.changelog_topics if t in partitions
        }
        ends = view.end_offsets(changelogs) if changelogs else {}
        world = World(
            now=time.time(),
            app=name,
            application_id=app.spec.application_id,
            replicas=app.spec.replicas,
            policy=policy(app),
            subtopologies=subs,
            partitions=partitions,
            end_offsets=ends,
            published=assignment.published,
            pods={n: pod_obs(s, reports.get(n)) for n, s in states.items()},
            memory=memory_from_status(app.status),
            conditions=conditions_from_status(app.status),
            topology_error=topology_error,
        )
        return world, assignment.resource_version

    def _act(self, target: Target, plan: Plan, assignment_rv: str | None, now: float) -> None:
        namespace, name, app, obj = target.namespace, target.name, target.app, target.obj
        secret_keys = target.secret_keys
        uid = obj["metadata"]["uid"]
        labels = (namespace, name)
        if plan.publish is not None and plan.document is not None:
            body = objects.assignment(name, uid, plan.publish.generation, plan.document)
            apply.publish(self.core, namespace, body, assignment_rv)
            self.metrics.generations.labels(*labels).inc()
            self.metrics.handovers.labels(*labels).inc(plan.handovers_published)
            log.info(
                "%s/%s: published generation %d (%d handovers, %d learners)",
                namespace,
                name,
                plan.publish.generation,
                plan.handovers_published,
                plan.learners,
            )
        for member in plan.create_pods:
            pvc = objects.state_claim(name, uid, member, app.spec)
            if pvc is not None:
                apply.create(self.core, namespace, pvc)
            if apply.create(
                self.core, namespace, objects.pod(name, uid, member, app.spec, secret_keys)
            ):
                log.info("%s/%s: created pod %s", namespace, name, member)
        for member in plan.delete_pods:
            if apply.delete_pod(self.core, namespace, member):
                log.info("%s/%s: deleted pod %s", namespace, name, member)
        if app.spec.state.volume_claim is not None:
            for member in plan.delete_claims:
                apply.delete_claim(self.core, namespace, claim(member))
        generation = int(obj["metadata"].get("generation", 0))
        status = build_status(plan, name, app.status, generation, now)
        self.custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            namespace,
            PLURAL,
            name,
            status_patch(status, obj.get("status")),
            _content_type="application/merge-patch+json",
        )
        for event in plan.events:
            log.info("%s/%s: %s: %s", namespace, name, event.reason, event.message)
            recorder.post(
                self.core,
                namespace,
                name,
                uid,
                type_=event.type,
                reason=event.reason,
                message=event.message,
            )
        for _task, seconds in plan.handovers_done:
            self.metrics.handover_seconds.labels(*labels).observe(seconds)
        self.metrics.learners.labels(*labels).set(plan.learners)
        self.metrics.generation.labels(*labels).set(plan.assessment.generation)

    def _refused(
        self, namespace: str, name: str, obj: dict[str, Any], reason: str, message: str
    ) -> None:
        """Nothing can be decided: say why in ``Degraded`` and leave everything running."""
        generation = int(obj["metadata"].get("generation", 0))
        raw = obj.get("status") or {}
        try:
            before = StreamAppStatus.model_validate(raw).conditions
        except ValueError:
            before = None
        degraded = Condition("Degraded", "True", reason, message)
        status = StreamAppStatus(
            phase="Degraded",
            conditions=[
                condition(degraded, find_condition(before, "Degraded"), generation, time.time())
            ],
        )
        self.custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            namespace,
            PLURAL,
            name,
            {"status": status.model_dump(mode="json", exclude_none=True)},
            _content_type="application/merge-patch+json",
        )
