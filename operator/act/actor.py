"""Carry out one :class:`~segue.operator.scaling.Plan` for one StreamApp, deciding nothing.

Acts run in a safe order: publish the generation (over exactly the version it was
decided from; :class:`~.apply.Conflict` if it moved, and the caller decides again),
create claims and pods, delete pods and claims, then write the status and post the
events. The workers' ServiceAccount, Role and RoleBinding are written once per app
generation (:meth:`Actor.ensure_access`). ``reconcile`` calls this after the scaling
state machine; the object builders are :mod:`.objects`, the writes :mod:`.apply`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubernetes.client import CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api

from segue.operator.act import access, agent, apply, objects
from segue.operator.act.recorder import EventRecorder, Involved
from segue.operator.act.signal_status import due, to_status
from segue.operator.act.status_patch import build_status, changes, condition, status_patch
from segue.operator.api import GROUP, PLURAL, VERSION, StreamApp
from segue.operator.api.names import claim
from segue.operator.api.status import StreamAppStatus, find_condition
from segue.operator.autoscale import AppSignal
from segue.operator.metrics import OperatorMetrics
from segue.operator.scaling import Condition, Plan
from segue.operator.settings import KafkaStreamsAgent

log = logging.getLogger("segue.operator")


@dataclass(frozen=True)
class Target:
    """The StreamApp a plan is for, as read at the start of the step."""

    namespace: str
    name: str
    uid: str
    generation: int  # metadata.generation
    app: StreamApp | None  # None: the object does not parse (see Actor.refuse)
    raw_status: dict[str, Any] | None  # the status as read, for the merge patch
    secret_keys: tuple[str, ...] = ()

    @property
    def involved(self) -> Involved:
        return Involved(self.namespace, self.name, self.uid)


class Actor:
    def __init__(
        self,
        api_client: Any,
        metrics: OperatorMetrics,
        identity: str,
        kstreams_agent: KafkaStreamsAgent | None = None,
    ) -> None:
        self.core = CoreV1Api(api_client)
        self.rbac = RbacAuthorizationV1Api(api_client)
        self.custom = CustomObjectsApi(api_client)
        self.metrics = metrics
        self.identity = identity  # written on each generation it publishes
        self.kstreams_agent = kstreams_agent or KafkaStreamsAgent()
        self.recorder = EventRecorder(self.core)
        self._access: set[tuple[str, int]] = set()  # (uid, generation) with access written

    def forget(self, namespace: str, name: str, uid: str) -> None:
        """The app's loop ended: drop what is remembered of it."""
        self._access = {a for a in self._access if a[0] != uid}
        self.recorder.forget(namespace, name)

    def ensure_access(self, target: Target) -> None:
        """The workers' ServiceAccount, Role and RoleBinding, once per app generation."""
        if (target.uid, target.generation) in self._access:
            return
        name, uid, namespace = target.name, target.uid, target.namespace
        runtime = target.app.spec.runtime if target.app is not None else "segue"
        apply.ensure_worker_access(
            self.core,
            self.rbac,
            namespace,
            [
                access.service_account(name, uid),
                access.role(name, uid, runtime),
                access.role_binding(name, uid, namespace),
                *([access.group(name, uid)] if runtime == "kafka-streams" else []),
            ],
        )
        self._access.add((uid, target.generation))

    def carry_out(
        self,
        target: Target,
        plan: Plan,
        assignment_rv: str | None,
        now: float,
        signal: AppSignal | None = None,
    ) -> None:
        """Act on ``plan``; ``signal``: the app's autoscaling signal, written to the
        status when due (:mod:`.signal_status`)."""
        assert target.app is not None
        namespace, name, uid, spec = target.namespace, target.name, target.uid, target.app.spec
        labels = (namespace, name)
        if plan.publish is not None and plan.document is not None:
            body = objects.assignment(
                name, uid, plan.publish.generation, plan.document, self.identity
            )
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
            pvc = objects.state_claim(name, uid, member, spec)
            if pvc is not None:
                apply.create(self.core, namespace, pvc)
            pod = objects.pod(
                name, uid, member, spec, target.secret_keys, agent=self.kstreams_agent
            )
            if spec.runtime == "kafka-streams":
                pod = agent.with_agent(
                    pod,
                    image=self.kstreams_agent.image,
                    jar=self.kstreams_agent.jar,
                    metrics_port=spec.metrics_port,
                    security=objects.CONTAINER_SECURITY_CONTEXT,
                )
            if apply.create(self.core, namespace, pod):
                log.info("%s/%s: created pod %s", namespace, name, member)
        for member in plan.delete_pods:
            if apply.delete_pod(self.core, namespace, member):
                log.info("%s/%s: deleted pod %s", namespace, name, member)
        if spec.state.volume_claim is not None:
            for member in plan.delete_claims:
                apply.delete_claim(self.core, namespace, claim(member))
        previous = target.app.status
        written = previous.autoscaling if previous else None
        fresh = to_status(signal) if signal is not None and due(written, signal) else None
        status = build_status(plan, name, previous, target.generation, now, autoscaling=fresh)
        patch = status_patch(status, target.raw_status)
        if changes({"status": target.raw_status or {}}, patch):
            self._patch_status(target, patch)
        for event in plan.events:
            log.info("%s/%s: %s: %s", namespace, name, event.reason, event.message)
            self._tell(target, event.type, event.reason, event.message, now)
        for _task, seconds in plan.handovers_done:
            self.metrics.handover_seconds.labels(*labels).observe(seconds)
        self.metrics.learners.labels(*labels).set(plan.learners)
        self.metrics.generation.labels(*labels).set(plan.assessment.generation)
        held = plan.memory.held
        errors = Counter(f.reason for m in plan.assessment.members for f in m.faults.values())
        self.metrics.show_state(
            namespace,
            name,
            [(c.type, c.status, c.reason) for c in plan.assessment.conditions],
            learners={t: (p.member, p.lag) for t, p in (held.progress if held else {}).items()},
            errors=errors,
            members=Counter(m.role for m in plan.assessment.members),
        )

    def acknowledge(self, target: Target, message: str, now: float) -> None:
        """A new app's first status, before its first look (which waits on Kafka, up to
        ``--kafka-timeout``): ``Pending``, and ``Balanced`` ``Unknown`` saying what the
        operator reads, so ``kubectl get`` answers at once."""
        waiting = Condition("Balanced", "Unknown", "Observing", message)
        status = StreamAppStatus(
            phase="Pending", conditions=[condition(waiting, None, target.generation, now)]
        )
        self._patch_status(target, {"status": status.model_dump(mode="json", exclude_none=True)})
        self._show(target, status)

    def refuse(
        self,
        target: Target,
        reason: str,
        message: str,
        now: float,
        unknown: Sequence[Condition] = (),
    ) -> None:
        """Nothing can be decided: say why in ``Degraded`` (and once as a Warning event),
        and leave everything running as it is. ``unknown`` replaces conditions that the
        cause makes unknowable (``KafkaReplicated`` while Kafka cannot be read); the others
        stay as last written (the app keeps running on what was decided before). A merge
        patch replaces the whole list, so it is sent whole."""
        try:
            before = StreamAppStatus.model_validate(target.raw_status or {}).conditions
        except ValueError:
            before = None
        old = find_condition(before, "Degraded")
        fresh = [
            condition(c, find_condition(before, c.type), target.generation, now)
            for c in [Condition("Degraded", "True", reason, message), *unknown]
        ]
        kept = [c for c in before or [] if c.type not in {f.type for f in fresh}]
        status = StreamAppStatus(phase="Degraded", conditions=[*kept, *fresh])
        self._patch_status(target, {"status": status.model_dump(mode="json", exclude_none=True)})
        self._show(target, status)
        if old is None or (old.status, old.reason, old.message) != ("True", reason, message):
            self._tell(target, "Warning", reason, message, now)

    def _tell(self, target: Target, type_: str, reason: str, message: str, now: float) -> None:
        """Post an Event (aggregated by the recorder) and count it for the alerts."""
        self.recorder.post(target.involved, type_=type_, reason=reason, message=message, now=now)
        self.metrics.count_event(target.namespace, target.name, type_, reason)

    def _show(self, target: Target, status: StreamAppStatus) -> None:
        """The conditions just written, as metrics (learners and errors as last shown)."""
        said = [(c.type, c.status, c.reason) for c in status.conditions or []]
        self.metrics.show_state(target.namespace, target.name, said)

    def _patch_status(self, target: Target, patch: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            target.namespace,
            PLURAL,
            target.name,
            patch,
            _content_type="application/merge-patch+json",
        )
