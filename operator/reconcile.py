"""One reconcile step of one StreamApp: observe, decide, act. The imperative shell.

Everything the step needs is read fresh (the StreamApp, its pods' metrics, the
published assignment with its resourceVersion, Kafka's partition counts and changelog
end offsets; the pods themselves come from the watch-fed cache ``handlers`` keeps), so
a step may be repeated or interrupted anywhere: the next one decides again from the
world as it is. The step only orchestrates: :mod:`.world` observes, the scaling state
machine decides, :class:`~.act.actor.Actor` carries the plan out. A publish that lost
a race (the assignment moved since it was read) is not an error: the next step, at
once, decides again. ``handlers`` runs this in a loop per app.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any, NamedTuple

from kubernetes.client import CoreV1Api, CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from segue.operator.act.actor import Actor, Target
from segue.operator.act.apply import Conflict
from segue.operator.act.history import HistoryProducer
from segue.operator.api import GROUP, PLURAL, VERSION, InvalidStreamApp, StreamApp
from segue.operator.autoscale import SignalBoard, Window, compute, remember
from segue.operator.history import Seen, step_record
from segue.operator.kstreams.answer import answered
from segue.operator.kstreams.seen import GroupsSeen
from segue.operator.kstreams.told import told
from segue.operator.laps import Laps
from segue.operator.metrics import OperatorMetrics
from segue.operator.observe import KafkaObserveError, PodState
from segue.operator.scaling import (
    KAFKA_UNAVAILABLE,
    Plan,
    decide,
    replication_unread,
    replication_unreadable,
)
from segue.operator.settings import OperatorSettings
from segue.operator.world import Observed, Observer, input_sample
from segue.protocol import DocumentError

NO_AGENT = (
    "runtime kafka-streams needs the agent jar injected into its pods, and this operator"
    " has no image to copy it from (--kstreams-agent-image; the Helm chart passes the"
    " operator's own): no pods are created (docs/kafka-streams.md)"
)

log = logging.getLogger("segue.operator")

SAMPLE_EVERY = 1.0  # seconds: at most one signal sample (three admin calls) per app per second
# why the metric stays unknown for a window after an outage (autoscale.sample.Window)
REGAINING = "measuring the input again after Kafka was unavailable"


def regaining(window_seconds: int) -> str:
    """:data:`REGAINING`, with how long the app's window is."""
    return f"{REGAINING} (a rate needs {window_seconds} s of samples taken since)"


class Gone(Exception):
    """The StreamApp was deleted."""


class Next(NamedTuple):
    """When to look at the app again; ``urgent``: something is in flight or due, so that
    look goes ahead of settled apps' routine ones (:mod:`.steps`)."""

    delay: float
    urgent: bool = False


class Reconciler:
    def __init__(
        self, api_client: Any, settings: OperatorSettings, metrics: OperatorMetrics
    ) -> None:
        self.api_client = api_client
        self.custom = CustomObjectsApi(api_client)
        self.settings = settings
        self.metrics = metrics
        self.observer = Observer(CoreV1Api(api_client), settings)
        self.actor = Actor(
            api_client, metrics, settings.leader_election.identity, settings.kstreams_agent
        )
        self.signals = SignalBoard()  # what the metrics and the external metrics API read
        self._samples: dict[str, Window] = {}  # app uid -> the signal's window
        self.history = HistoryProducer(settings.history_topic, metrics)
        self._seen: dict[str, Seen | None] = {}  # app uid -> its last history record's basis
        self.groups = GroupsSeen()  # Kafka Streams apps: rebalances counted, fallbacks said

    def forget(self, namespace: str, name: str, uid: str) -> None:
        """The app's loop ended: drop what is cached for it."""
        self.actor.forget(namespace, name, uid)
        self.observer.forget(uid)
        self._samples.pop(uid, None)
        self._seen.pop(uid, None)
        self.groups.forget(uid)
        self.signals.remove(namespace, name)
        self.metrics.forget_signal(namespace, name)
        self.metrics.forget_state(namespace, name)

    def signal(self, namespace: str, app: StreamApp, uid: str, observed: Observed) -> str | None:
        """Sample the input and put the app's new signal on the board. Never fails the
        step: if Kafka cannot be read the last signal stays, its ``time`` going stale,
        and why is returned: the step says it in the status, then marks the signal
        unknown, so no reader sees the metric unknown while the status still says
        ``KafkaReplicated`` ``True``."""
        window = self._samples.get(uid, Window())
        if window.samples and observed.world.now - window.samples[-1].time < SAMPLE_EVERY:
            return None
        name = app.metadata["name"]
        try:
            sample = input_sample(observed)
        except KafkaObserveError as exc:  # the step marks the signal unknown
            log.warning("%s/%s: no autoscaling sample: %s", namespace, name, exc)
            self._samples[uid] = remember(window, None)  # no rate across the gap
            return str(exc)
        seconds = app.spec.autoscaling.window_seconds
        window = self._samples[uid] = (
            window if sample is None else remember(window, sample, seconds)
        )
        if sample is None or not window.ready:  # no rate from one sample, nor yet after a gap
            if window.regaining:
                self.signals.mark_unknown(namespace, name, regaining(seconds))
            return None
        signal = compute(
            namespace,
            name,
            app.spec.replicas,
            window.samples,
            previous=self.signals.get(namespace, name),
            catch_up_seconds=app.spec.autoscaling.catch_up_seconds,
        )
        self.signals.put(signal)
        self.metrics.show_signal(namespace, name, asdict(signal))
        return None

    def record(
        self, namespace: str, app: StreamApp, uid: str, observed: Observed, plan: Plan
    ) -> None:
        """The step's history record to the app's own cluster, if recording is on and the
        step changed something. Never fails the step (docs/operator.md, "History")."""
        if not self.settings.history_topic:
            return
        try:
            row, self._seen[uid] = step_record(
                namespace, observed.world, plan, observed.reports, self._seen.get(uid)
            )
        except (ValueError, KeyError) as exc:  # a row the schema refuses: a bug, not an outage
            log.warning("%s/%s: no history record: %s", namespace, app.metadata["name"], exc)
            return
        if row is not None:
            self.history.send(app.spec.kafka.bootstrap_servers, observed.credentials, row)

    def answer(self, namespace: str, name: str, uid: str, observed: Observed, plan: Plan) -> Plan:
        """A Kafka Streams app's plan, answering its group's latest report; a rebalance
        counted, a fallback said (``segue.operator.kstreams``)."""
        assert observed.group is not None
        world, group = observed.world, observed.group
        plan = answered(plan, world, group, observed.answer, observed.clients)
        news = self.groups.saw(uid, group, world.published is not None)
        if news.rebalanced:
            self.metrics.kstreams_rebalances.labels(namespace, name).inc()
        if news.fallback is not None:
            plan = replace(plan, events=(*plan.events, news.fallback))
        return plan

    def time_step(
        self, namespace: str, name: str, observed: Observed, plan: Plan, laps: Laps
    ) -> None:
        """The step's duration; for a Kafka Streams app's answer, what :mod:`.kstreams.told`
        says of it."""
        self.metrics.reconcile_seconds.labels(namespace, name).observe(laps.total)
        report = observed.group.report if observed.group is not None else None
        if report is not None and plan.publish is not None:
            previous = (observed.answer, observed.world.published)
            told(self.metrics, (namespace, name), report, previous=previous, plan=plan, laps=laps)

    def plan_for(
        self, namespace: str, name: str, uid: str, observed: Observed, unread: str | None
    ) -> Plan:
        """The core's plan for the step's look; ``unread``: why Kafka stopped answering
        since the look (its ``KafkaReplicated`` is then Unknown)."""
        plan = decide(observed.world)
        if unread is not None:
            plan = replication_unread(plan, unread)
        if observed.group is not None:  # Kafka Streams takes a generation up at a rebalance
            plan = self.answer(namespace, name, uid, observed, plan)
        return plan

    def kafka_unavailable(self, target: Target, exc: KafkaObserveError) -> Next:
        """Kafka unreachable or refusing us (a wrong password, say): no decision without
        its offsets. Said in Degraded; the next step that reaches Kafka clears it. The
        signal goes unknown and its window is dropped: no rate spans the gap."""
        namespace, name = target.namespace, target.name
        self.metrics.errors.labels(namespace, name, type(exc).__name__).inc()
        log.warning("%s/%s: Kafka unavailable: %s", namespace, name, exc)
        self.actor.refuse(
            target, KAFKA_UNAVAILABLE, str(exc), time.time(), [replication_unreadable(str(exc))]
        )
        self.signals.mark_unknown(namespace, name, f"Kafka unavailable: {exc}")
        self._samples[target.uid] = remember(Window(), None)
        return Next(self.settings.error_backoff)

    def read_app(self, namespace: str, name: str) -> tuple[Target, StreamApp] | Next:
        """The StreamApp as it is now, or when to look again if it cannot run (said in
        its status). Raises :class:`Gone`."""
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
        target = Target(
            namespace, name, meta["uid"], int(meta.get("generation", 0)), None, obj.get("status")
        )
        try:
            app = StreamApp.from_object(obj)
        except InvalidStreamApp as exc:
            self.actor.refuse(target, "InvalidSpec", str(exc), time.time())
            return Next(self.settings.idle_interval)
        if app.spec.runtime == "kafka-streams" and not self.settings.kstreams_agent.image:
            self.actor.refuse(target, "AgentNotConfigured", NO_AGENT, time.time())
            return Next(self.settings.idle_interval)
        if not target.raw_status:
            bootstrap = app.spec.kafka.bootstrap_servers
            self.actor.acknowledge(
                target, f"first look: reading the app's topics and offsets from {bootstrap}",
                time.time(),
            )  # fmt: skip
        return target, app

    def step(self, namespace: str, name: str, pods: Mapping[str, PodState]) -> Next:
        """One step; when to take the next. Raises :class:`Gone`."""
        laps = Laps()
        read = self.read_app(namespace, name)
        if isinstance(read, Next):
            return read
        target, app = read
        laps.lap("app")
        try:
            observed = self.observer.world(namespace, app, target.uid, pods, laps)
        except DocumentError as exc:
            # Never publish over a document this operator cannot read (a newer one wrote it?)
            self.actor.refuse(target, "AssignmentUnreadable", str(exc), time.time())
            return Next(self.settings.idle_interval)
        except KafkaObserveError as exc:
            return self.kafka_unavailable(target, exc)
        target = replace(target, app=app, secret_keys=observed.secret_keys)
        unread = self.signal(namespace, app, target.uid, observed)
        laps.lap("signal")
        self.actor.ensure_access(target)
        laps.lap("access")
        world = observed.world
        plan = self.plan_for(namespace, name, target.uid, observed, unread)
        laps.lap("decide")
        try:
            self.actor.carry_out(
                target,
                plan,
                observed.assignment_version,
                world.now,
                self.signals.get(namespace, name),
            )
        except Conflict as lost:
            log.info("%s/%s: %s; deciding again", namespace, name, lost)
            self.metrics.conflicts.labels(namespace, name).inc()
            return Next(0.0, urgent=True)
        finally:
            if unread is not None:  # the status says it first, then the metrics API
                self.signals.mark_unknown(namespace, name, f"Kafka unavailable: {unread}")
        laps.lap("act")
        self.record(namespace, app, target.uid, observed, plan)
        laps.lap("history")
        self.time_step(namespace, name, observed, plan, laps)
        wait = self.settings.busy_interval if plan.busy else self.settings.idle_interval
        if plan.wake_at is not None:
            wait = min(wait, max(0.05, plan.wake_at - time.time()))
        return Next(wait, urgent=plan.busy or wait < self.settings.idle_interval)
