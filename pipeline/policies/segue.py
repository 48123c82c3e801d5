"""Segue's policy: the operator's real scaling state machine, driven with simulated worlds.

Each tick builds a :class:`~segue.operator.scaling.World` from the cluster exactly as
the operator's shell does from the API server and Kafka (pods, the generation each
applied, its roles, changelog offsets per store, changelog end offsets), calls
:func:`segue.operator.scaling.decide` and carries the :class:`Plan` out in its order:
publish, create pods, delete pods. Nothing of the decision is copied here.

It looks as often as the operator does (docs/operator.md, "Watching and timing"): every
tick while the last plan was busy (``--busy-interval`` is 0.5 s, under a tick), every
``idle_interval`` (5 s) when settled, at the plan's ``wake_at``, and at once when a
watch would wake it: ``spec.replicas`` changed or a pod appeared, vanished, started or
applied a generation. New partitions are seen on the next look, as Kafka's metadata is.
A busy look that would plan what the last one did is skipped (``skip_fixed_points``):
while learners restore towards a held target nothing changes until a copy catches up,
a watch fires, or a deadline passes (``idle_until``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from segue.operator.scaling import Condition, Memory, Plan, PodObs, Policy, World, decide
from segue.operator.scaling.hold import STALL_SECONDS
from segue.pipeline.state import Cluster, Pod
from segue.protocol.names import changelog_topic
from segue.protocol.topology import SubTopologyDescription


def source_topic(app: str, sub: int) -> str:
    return f"{app}-in-{sub}"


@lru_cache(maxsize=256)  # asked for every copy of every look
def store_name(sub: int) -> str:
    return f"store-{sub}"


@dataclass
class SegueController:
    policy: Policy = field(default_factory=Policy)
    name: str = "segue"
    maps_partitions: bool = True
    memory: Memory = field(default_factory=Memory)
    conditions: dict[str, Condition] = field(default_factory=dict)
    last: Plan | None = None
    idle_interval: float = 5.0
    next_look: float = 0.0
    watched: tuple[object, ...] = ()
    shape: tuple[object, ...] = ()  # the tasks and sources at the last look
    caught_up: frozenset[tuple[str, str]] = frozenset()  # copies caught up at the last look
    # skip the looks a busy operator takes that would plan what the last one did
    # (``idle_until``; tests/pipeline/test_steady.py runs fleets with it off and compares)
    skip_fixed_points: bool = True

    def step(self, c: Cluster, now: float) -> None:
        if _watched(c, now) == self.watched and now < self.next_look:
            return
        last = self.last
        if self.skip_fixed_points and last is not None and self.idle_until(c, now) > now:
            # the last plan still stands: this look would decide it again
            if not last.busy:  # an idle look: the next one is due as it would set it
                self.next_look = min(now + self.idle_interval, last.wake_at or math.inf)
            return
        plan = decide(self.world(c, now))
        self.last = plan
        self.next_look = now if plan.busy else now + self.idle_interval
        if plan.wake_at is not None:
            self.next_look = min(self.next_look, plan.wake_at)
        if plan.publish is not None:
            c.publish(plan.publish)
        for name in plan.create_pods:
            c.create(name, now)
        for name in plan.delete_pods:
            c.delete(name)
        self.memory = plan.memory
        self.conditions = {x.type: x for x in plan.assessment.conditions}
        self.watched = _watched(c, now)
        self.shape = _shape(c)
        self.caught_up = _caught_up(c, self.lag_floor)

    def explain(self, c: Cluster, now: float) -> str | None:
        """The status an operator would show: Balanced's and Scaling's reasons."""
        done = {"Balanced": "True", "Scaling": "False"}
        shown = [
            f"{x.type} {x.status} {x.reason}: {x.message}"
            for kind, settled in done.items()
            if (x := self.conditions.get(kind)) is not None and x.status != settled
        ]
        return "; ".join(shown) or None

    def quiet(self, c: Cluster, now: float) -> bool:
        p = self.last
        return p is not None and not p.busy and p.publish is None and not p.create_pods

    @property
    def lag_floor(self) -> float:
        return float(self.policy.acceptable_recovery_lag)

    def idle_until(self, c: Cluster, now: float, *, backlogs_fixed: bool = False) -> float:
        """A plan that does nothing, with no learner restoring and no handover in flight
        (settled, or waiting for pods to start), is a fixed point of the operator's looks
        while the world only moves linearly (tests/pipeline/test_steady.py checks it over
        fleets): the next change is what a watch sees, or the plan's ``wake_at``. So is one
        whose learners restore towards a held target (``memory.held``: no solve weighs
        their lags) until a copy comes within reach of caught up, which bounds the leap
        (:mod:`..steady`), or a learner could count as stalled."""
        p = self.last
        if (
            p is None
            or p.publish is not None
            or p.create_pods
            or p.delete_pods
            or (p.learners and p.memory.held is None)
            or p.memory.handovers
            or _watched(c, now) != self.watched
        ):
            return now
        if _shape(c) != self.shape:
            return self.next_look  # new partitions: no watch sees them, the next look does
        if _caught_up(c, self.lag_floor) != self.caught_up:
            return now  # a copy crossed into caught up since the last look: it acts on that
        stalls = (
            [g.since + STALL_SECONDS for g in p.memory.held.progress.values()]
            if (p.memory.held)
            else []
        )
        return min([p.wake_at if p.wake_at is not None else math.inf, *stalls])

    def skipped(self, c: Cluster, start: float, ticks: int, tick: float) -> None:
        """Each settled look due in the skipped ticks happened (at the first tick at or
        after ``next_look``) and set the next one ``idle_interval`` later."""
        if self.last is None or self.last.busy:
            return  # a busy operator looks every tick: the next one looks at once
        end = start + ticks * tick
        look = self.next_look
        while True:
            due = max(math.ceil(look / tick - 1e-9) * tick, start)
            if due >= end - 1e-9:
                break
            look = due + self.idle_interval
        self.next_look = look

    def world(self, c: Cluster, now: float) -> World:
        subs: dict[int, SubTopologyDescription] = {}
        partitions: dict[str, int] = {}
        ends: dict[tuple[str, int], int] = {}
        for task in c.tasks.values():
            sid = task.subtopology
            sub = subs.get(sid)
            if sub is None:
                stores = (store_name(sid),) if task.stateful else ()
                sub = subs[sid] = SubTopologyDescription(
                    sid,
                    (source_topic(c.app, sid),),
                    stores,
                    tuple(changelog_topic(c.app, s) for s in stores),
                )
                partitions[sub.source_topics[0]] = c.sources[sid]
            if sub.changelog_topics:
                changelog = sub.changelog_topics[0]
                partitions[changelog] = max(partitions.get(changelog, 0), task.partition + 1)
                ends[(changelog, task.partition)] = int(task.end)
        return World(
            now=now,
            app=c.app,
            application_id=c.app,
            replicas=c.replicas,
            policy=self.policy,
            subtopologies=tuple(subs[s] for s in sorted(subs)),
            partitions=partitions,
            end_offsets=ends,
            published=c.published,
            pods={n: self._observe(c, p, now) for n, p in c.pods.items()},
            memory=self.memory,
            conditions=dict(self.conditions),
        )

    def _observe(self, c: Cluster, pod: Pod, now: float) -> PodObs:
        up = pod.up(now)
        roles: dict[str, str] = {}
        held = c.published.members.get(pod.name) if c.published else None
        if up and held is not None and c.published and pod.applied == c.published.generation:
            roles.update({t: "active" for t in held.active})
            roles.update({t: "standby" for t in held.standby})
            roles.update({t: "learning" for t in held.learning})
        offsets: dict[str, dict[str, int]] = {}
        sizes: dict[str, int] = {}
        for t, off in pod.restored.items() if up else ():
            task = c.tasks.get(t)
            if task is not None:
                offsets[t] = {store_name(task.subtopology): int(off)}
                sizes[t] = int(off * task.record_bytes)
        restoring = frozenset(
            t for t in (held.active if held and roles else ()) if t in c.tasks and c.lag(pod, t) > 0
        )
        return PodObs(
            name=pod.name,
            running=up,
            ready=up,
            reporting=up,
            generation=(pod.applied or None) if up else None,
            roles=roles,
            offsets=offsets,
            state_bytes=sizes,
            changelog_bytes=sizes,
            restoring=restoring,
            processing=frozenset(t for t, r in roles.items() if r == "active") - restoring,
        )


def _watched(c: Cluster, now: float) -> tuple[object, ...]:
    """What the operator's watches see: the spec's replicas, each pod's phase and generation."""
    return (c.replicas, tuple((n, p.up(now), p.applied) for n, p in sorted(c.pods.items())))


def _shape(c: Cluster) -> tuple[object, ...]:
    """What changes under the operator without a watch seeing it: tasks and sources."""
    return (len(c.tasks), tuple(sorted(c.sources.items())))


def _caught_up(c: Cluster, lag_floor: float) -> frozenset[tuple[str, str]]:
    """The (pod, task) copies within ``lag_floor`` of their changelog end, in the integer
    offsets the operator sees: a look's decisions depend on lags only through these."""
    if c.published is None:
        return frozenset()
    out = set()
    for name, pod in c.pods.items():
        roles = c.published.members.get(name)
        for t in roles.tasks() if roles is not None else ():
            task = c.tasks.get(t)
            if task is None or not task.stateful or t not in pod.restored:
                continue
            if int(task.end) - int(pod.restored[t]) <= lag_floor:
                out.add((name, t))
    return frozenset(out)
