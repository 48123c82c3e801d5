"""Observe one StreamApp: from the API server, its pods' metrics and Kafka to a ``World``.

The glue between :mod:`segue.operator.observe` (which reads) and
:mod:`segue.operator.scaling` (which chooses). Kafka admin clients are kept per bootstrap
address and credentials, and the application's topology is read once per app (from
``spec.topology``, else from a worker's ``/topology``); everything else is read fresh on
every step, so a restarted operator sees exactly what a running one would.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client import CoreV1Api

from segue.operator.act.objects import template_hash
from segue.operator.act.status_patch import conditions_from_status, memory_from_status
from segue.operator.api import StreamApp
from segue.operator.autoscale import Sample, inputs
from segue.operator.kstreams.agents import AgentPages
from segue.operator.kstreams.answer import LEAD
from segue.operator.kstreams.group import Group, read_group
from segue.operator.kstreams.pods import clients, observe_pods
from segue.operator.kstreams.waits import WaitClock, look_at_group
from segue.operator.laps import Laps
from segue.operator.observe import (
    KafkaView,
    PodState,
    ScrapeError,
    WorkerReport,
    fetch_topology,
    scrape,
)
from segue.operator.observe.agent import AgentReport
from segue.operator.observe.assignment import read_assignment
from segue.operator.observe.credentials import KafkaCredentials, read_credentials
from segue.operator.observe.pod_obs import pod_obs
from segue.operator.scaling import Policy, World
from segue.operator.settings import OperatorSettings
from segue.operator.stalls import TransactionWatch
from segue.protocol.kstreams import KafkaStreamsAnswer, topology_of
from segue.protocol.topology import SubTopologyDescription, parse_topology

log = logging.getLogger("segue.operator.observe")


@dataclass(frozen=True)
class Observed:
    world: World
    assignment_version: str | None  # the resourceVersion a new generation is published over
    secret_keys: tuple[str, ...]  # the keys of the Kafka credentials Secret
    reports: Mapping[str, WorkerReport] = field(default_factory=dict)  # scraped this step
    kafka: KafkaView | None = None  # the view the world was read through
    # the operator's own (spec.kafka.operatorCredentialsSecret, else the app's): its history
    credentials: KafkaCredentials = field(default_factory=KafkaCredentials)
    # runtime kafka-streams: the plugin's report and outcome, which member each of the
    # report's clients is, and the answer in force (segue.operator.kstreams)
    group: Group | None = None
    clients: Mapping[str, str] = field(default_factory=dict)
    answer: KafkaStreamsAnswer | None = None


def policy(app: StreamApp) -> Policy:
    s = app.spec.scaling
    return Policy(
        acceptable_recovery_lag=s.acceptable_recovery_lag,
        max_warmup_replicas=s.max_warmup_replicas,
        num_standby_replicas=s.num_standby_replicas,
        scale_down_timeout=float(s.scale_down_timeout_seconds),
        # A Kafka Streams member whose process left the group holds nothing Kafka Streams
        # can run: its tasks go elsewhere at once, as Kafka Streams' own assignor would
        registration_timeout=(
            0.0 if app.spec.runtime == "kafka-streams" else float(s.registration_timeout_seconds)
        ),
        expansion_timeout=float(s.expansion_timeout_seconds),
        balance_tolerance=s.balance_tolerance,
        learner_promotion=s.learner_promotion,
        # Each revoking round pauses a whole Kafka Streams group under exactly-once and
        # waits for its slowest member: a new JVM is given actives once it is warm
        warm_first=app.spec.runtime == "kafka-streams",
        learners_first=app.spec.runtime == "kafka-streams",
        leave_hands_over=app.spec.runtime == "kafka-streams",
        handover_lead=LEAD if app.spec.runtime == "kafka-streams" else 0.0,
        retain_state=app.spec.state.retention == "Retain",
        max_unavailable=app.spec.rollout.max_unavailable,
    )


class Observer:
    def __init__(self, core: CoreV1Api, settings: OperatorSettings) -> None:
        self.core = core
        self.settings = settings
        self._kafka: dict[tuple[str, KafkaCredentials], KafkaView] = {}
        self._topologies: dict[str, tuple[SubTopologyDescription, ...]] = {}
        self._pool = ThreadPoolExecutor(settings.scrape_workers, thread_name_prefix="segue-scrape")
        self._agents: dict[str, AgentPages] = {}  # app uid -> its Kafka Streams pods' pages
        self._waits: dict[str, WaitClock] = {}  # app uid -> what its group waited for
        self.transactions = TransactionWatch()  # what each app's held-partition watch saw

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for view in self._kafka.values():
            view.close()

    def kafka(self, bootstrap: str, extra: KafkaCredentials) -> KafkaView:
        key = (bootstrap, extra)
        if key not in self._kafka:
            self._kafka[key] = KafkaView(bootstrap, extra, timeout=self.settings.kafka_timeout)
        return self._kafka[key]

    def world(
        self,
        namespace: str,
        app: StreamApp,
        uid: str,
        pods: Mapping[str, PodState],
        laps: Laps | None = None,
    ) -> Observed:
        """The World of one step, with what acting on it needs.

        ``pods`` is the app's pods as the watch-fed cache has them; their metrics,
        the assignment and Kafka's offsets are read now; ``laps``, if given, times the
        reads."""
        laps = laps or Laps()
        name = app.metadata["name"]
        kafka_streams = app.spec.runtime == "kafka-streams"
        reports = {} if kafka_streams else self.scrape(namespace, app, pods)
        agents = self.agent_pages(namespace, app, uid, pods) if kafka_streams else {}
        laps.lap("pages")
        assignment = read_assignment(self.core, namespace, name)
        group = read_group(self.core, namespace, name) if kafka_streams else None
        if group is not None:  # the plugin reports the topology at every rebalance
            subs = topology_of(group.report).subtopologies if group.report else None
            topology_error = group.error
        else:
            key = f"{uid}/{app.metadata.get('generation', 0)}"
            subs, topology_error = self.topology(key, app, pods, reports)
        secret = read_credentials(self.core, namespace, app.spec.kafka.credentials_secret)
        own = app.spec.kafka.operator_credentials_secret
        mine = secret if own is None else read_credentials(self.core, namespace, own)
        view = self.kafka(app.spec.kafka.bootstrap_servers, mine)
        laps.lap("objects")
        topics = sorted({t for s in subs or () for t in (*s.source_topics, *s.changelog_topics)})
        sinks = sorted({t for s in subs or () for t in s.sink_topics})
        counts, replication = view.layout(topics, sinks) if topics else ({}, None)
        laps.lap("layout")
        partitions = {t: n for t, n in counts.items() if t in topics}
        changelogs = {
            t: partitions[t] for s in subs or () for t in s.changelog_topics if t in partitions
        }
        now, outputs = time.time(), {t: counts[t] for t in sinks if t in counts}
        ends, stalls, watched = self.transactions.look(uid, view, changelogs, outputs, now)
        clock = self._waits.setdefault(uid, WaitClock())
        waits = (
            look_at_group(clock, view, app.spec.application_id, agents, now)
            if group is not None and group.report is not None
            else None
        )
        laps.lap("offsets")
        world = World(
            now=now,
            app=name,
            application_id=app.spec.application_id,
            replicas=app.spec.replicas,
            policy=policy(app),
            subtopologies=subs,
            partitions=partitions,
            end_offsets=ends,
            published=assignment.published,
            pods=(
                observe_pods(
                    pods, agents, group, assignment.published, ends, answer=assignment.answer
                )
                if group is not None
                else {n: pod_obs(s, reports.get(n)) for n, s in pods.items()}
            ),
            memory=memory_from_status(app.status),
            conditions=conditions_from_status(app.status),
            topology_error=topology_error,
            template_hash=template_hash(app.spec, self.settings.kstreams_agent),
            replication=replication,
            stalls=stalls,
            watched_since=watched,
            bootstrap=app.spec.kafka.bootstrap_servers,
            group_wait=waits,
        )
        return Observed(
            world,
            assignment.resource_version,
            tuple(sorted(secret)),
            reports,
            view,
            mine,
            group,
            clients(group.report, agents) if group is not None else {},
            assignment.answer,
        )

    def scrape(
        self, namespace: str, app: StreamApp, states: Mapping[str, PodState]
    ) -> dict[str, WorkerReport]:
        """Every running pod's metrics, in parallel; a pod that does not answer is absent."""
        port, timeout = app.spec.metrics_port, self.settings.scrape_timeout
        live = [s for s in states.values() if s.ip and s.phase == "Running" and not s.terminating]

        def one(state: PodState) -> tuple[str, WorkerReport | None]:
            try:
                return state.name, scrape(state.ip or "", port, timeout)
            except ScrapeError as exc:
                log.debug("no metrics from %s/%s: %s", namespace, state.name, exc)
                return state.name, None

        return {n: r for n, r in self._pool.map(one, live) if r is not None}

    def agent_pages(
        self, namespace: str, app: StreamApp, uid: str, pods: Mapping[str, PodState]
    ) -> dict[str, AgentReport]:
        pages = self._agents.setdefault(uid, AgentPages(self._pool, self.settings.scrape_timeout))
        pages.forget({p.uid for p in pods.values()})
        return pages.read(namespace, app.spec.metrics_port, pods, time.time())

    def topology(
        self, key: str, app: StreamApp, states: Mapping[str, PodState], reports: Mapping[str, Any]
    ) -> tuple[tuple[SubTopologyDescription, ...] | None, str | None]:
        if key in self._topologies:
            return self._topologies[key], None
        app_id = app.spec.application_id
        if app.spec.topology is not None:
            doc = app.spec.topology.model_dump(by_alias=True)
            described = parse_topology(doc, application_id=app_id)
        else:
            answered = [s for n, s in sorted(states.items()) if n in reports and s.ip]
            if not answered:
                return None, None
            try:
                doc = fetch_topology(answered[0].ip or "", app.spec.metrics_port)
                described = parse_topology(doc, application_id=app_id)
            except (ScrapeError, ValueError) as exc:
                return None, f"{answered[0].name}: {exc}"
        subs = described.subtopologies
        self._topologies[key] = subs
        return subs, None

    def forget(self, uid: str) -> None:
        """Drop what is cached for a StreamApp that is gone."""
        for key in [k for k in self._topologies if k.startswith(f"{uid}/")]:
            del self._topologies[key]
        self._agents.pop(uid, None)
        self._waits.pop(uid, None)
        self.transactions.forget(uid)


def input_sample(observed: Observed) -> Sample | None:
    """The autoscaling signal's sample of this step: the input partitions' log ends and
    the app's committed offsets (two admin calls, a third for partitions it never
    committed), and what each member reported processing. None before the topology is
    known. Raises :class:`KafkaObserveError`; the caller keeps its last signal."""
    world, view = observed.world, observed.kafka
    if world.subtopologies is None or view is None:
        return None
    by_sub = inputs.input_topics(world.subtopologies)
    topics = {t: world.partitions[t] for ts in by_sub.values() for t in ts if t in world.partitions}
    log_end = view.log_end_offsets(topics)
    committed = view.committed_offsets(world.application_id, topics)
    never = {p: end for p, end in log_end.items() if p not in committed}
    if never:
        starts = view.log_start_offsets({t: world.partitions[t] for t, _ in never})
        committed.update({p: starts.get(p, 0) for p in never})
    assigned = [
        t for r in (world.published.members if world.published else {}).values() for t in r.tasks()
    ]
    processed = {n: inputs.processed(r.processed, by_sub) for n, r in observed.reports.items()}
    active = sum(inputs.runs_input(r.roles, by_sub) for r in observed.reports.values())
    if observed.group is not None:
        # Kafka Streams pods count nothing of their own: what the group committed of its
        # input is what it processed (exactly once, a record is committed when processed)
        processed = {"": sum(committed.values())}
        live = [p for p in world.pods.values() if p.reporting]
        active = sum(inputs.runs_input(p.roles, by_sub) for p in live)
    return Sample(
        time=world.now,
        log_end=log_end,
        committed=committed,
        processed=processed,
        active=active,
        tasks=inputs.input_tasks(assigned, by_sub),
    )
