"""A pure, step-by-step world for the scaling state machine: no cluster, no clock.

Pods come up one step after they are created and report at once; a copy of a task
restores ``rate`` changelog records per step; every pod applies the newest generation
in the step after it is published. Tests drive ``decide`` through it and look at what
came out, exactly as the operator's shell would carry a plan out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from segue.operator.scaling import (
    Condition,
    Memory,
    Plan,
    PodObs,
    Policy,
    Published,
    Replication,
    TaskFault,
    World,
    decide,
)
from segue.protocol.topology import SubTopologyDescription


@dataclass
class SimPod:
    alive: bool = False  # becomes True the step after creation
    generation: int | None = None
    restored: dict[str, int] = field(default_factory=dict)  # task -> next changelog offset
    stuck: bool = False  # never restores anything
    faults: dict[str, TaskFault] = field(default_factory=dict)  # tasks it cannot run
    template: str = ""  # the template hash it was built from
    late: int = 0  # steps it takes to come up beyond the first (a pod that starts slowly)
    starting: set[str] = field(default_factory=set)  # actives it holds, waiting to fence


@dataclass
class Sim:
    app: str = "wc"
    replicas: int = 2
    policy: Policy = field(default_factory=lambda: Policy(acceptable_recovery_lag=10))
    subtopologies: tuple[SubTopologyDescription, ...] = (
        SubTopologyDescription(0, ("in",), ("counts",), ("wc-counts-changelog",)),
    )
    partitions: dict[str, int] = field(default_factory=lambda: {"in": 6})
    changelog_end: int = 1000  # records per changelog partition
    rate: int = 1000  # records restored per step
    sequential: bool = False  # a pod restores one copy at a time (as Kafka Streams does)
    template: str = ""  # the spec's template hash; new pods are built from it
    now: float = 1000.0
    tick: float = 1.0
    pods: dict[str, SimPod] = field(default_factory=dict)
    published: Published | None = None
    memory: Memory = field(default_factory=Memory)
    conditions: dict[str, Condition] = field(default_factory=dict)
    plans: list[Plan] = field(default_factory=list)
    late: dict[str, int] = field(default_factory=dict)  # pod -> extra steps it takes to start
    blind: set[str] = field(default_factory=set)  # pods that cannot read the assignment
    replication: Replication | None = None  # what the cluster's metadata says

    def world(self) -> World:
        ends = {}
        for sub in self.subtopologies:
            for topic in sub.changelog_topics:
                count = self.partitions.get(topic, self.partitions.get(sub.source_topics[0], 6))
                for p in range(count):
                    ends[(topic, p)] = self.changelog_end
        obs = {name: self._observe(name, pod) for name, pod in self.pods.items()}
        return World(
            now=self.now,
            app=self.app,
            application_id=self.app,
            replicas=self.replicas,
            policy=self.policy,
            subtopologies=self.subtopologies,
            partitions=dict(self.partitions),
            end_offsets=ends,
            published=self.published,
            pods=obs,
            memory=self.memory,
            conditions=dict(self.conditions),
            template_hash=self.template,
            replication=self.replication,
        )

    def _observe(self, name: str, pod: SimPod) -> PodObs:
        roles: dict[str, str] = {}
        if self.published is not None and pod.alive and pod.generation is not None:
            held = self.published.members.get(name)
            if held is not None and pod.generation == self.published.generation:
                roles.update({t: "active" for t in held.active})
                roles.update({t: "standby" for t in held.standby})
                roles.update({t: "learning" for t in held.learning})
        store = self.subtopologies[0].stores[0] if self.subtopologies[0].stores else "s"
        return PodObs(
            name=name,
            running=pod.alive,
            ready=pod.alive,
            reporting=pod.alive,
            generation=pod.generation,
            roles=roles,
            offsets={t: {store: off} for t, off in pod.restored.items()},
            state_bytes={t: 100 for t in pod.restored},
            faults={t: f for t, f in pod.faults.items() if t in roles},
            restoring=frozenset(
                t
                for t, r in roles.items()
                if r == "active" and pod.restored.get(t, 0) < self.changelog_end
            ),
            processing=frozenset(
                t
                for t, r in roles.items()
                if r == "active"
                and pod.restored.get(t, 0) >= self.changelog_end
                and t not in pod.faults
                and t not in pod.starting
            ),
            template_hash=pod.template,
        )

    def step(self) -> Plan:
        plan = decide(self.world())
        self.plans.append(plan)
        self._carry_out(plan)
        self._advance()
        self.now += self.tick
        return plan

    def _carry_out(self, plan: Plan) -> None:
        if plan.publish is not None:
            self.published = plan.publish
        for name in plan.delete_pods:
            self.pods.pop(name, None)
        for name in plan.create_pods:
            self.pods.setdefault(name, SimPod(template=self.template, late=self.late.get(name, 0)))
        self.memory = plan.memory
        self.conditions = {c.type: c for c in plan.assessment.conditions}

    def _advance(self) -> None:
        for name, pod in self.pods.items():
            if not pod.alive:
                pod.alive = pod.late <= 0
                pod.late -= 1
                continue
            if self.published is None or name in self.blind:
                continue
            pod.generation = self.published.generation  # members or not, as workers do
            if name not in self.published.members:
                continue
            held = self.published.members[name]
            budget = self.rate  # records this pod restores this step
            for t in held.tasks():
                if t in held.active:
                    pod.restored[t] = self.changelog_end  # an active is always current
                elif not pod.stuck and t not in pod.faults:
                    was = pod.restored.get(t, 0)
                    pod.restored[t] = min(self.changelog_end, was + budget)
                    budget -= (pod.restored[t] - was) if self.sequential else 0
                else:
                    pod.restored.setdefault(t, 0)

    def run(self, steps: int = 60) -> Plan:
        """Step until nothing is in flight and every placed task runs (or ``steps`` runs
        out); the last plan. A placed task that starts outside a handover leaves the plan
        idle but the phase ``Scaling``: a worker's readiness turns once its actives run,
        and the pod watch wakes the operator for the look that says so."""
        plan = self.step()
        for _ in range(steps):
            if (
                not plan.busy
                and plan.assessment.phase != "Scaling"
                and plan.publish is None
                and not plan.create_pods
                and not (plan.delete_pods)
                and self._settled()
            ):
                return plan
            plan = self.step()
        return plan

    def _settled(self) -> bool:
        return all(p.alive for p in self.pods.values())

    def owners(self) -> dict[str, str]:
        assert self.published is not None
        return {t: m for m, r in self.published.members.items() for t in r.active}

    def events(self, reason: str) -> list[str]:
        return [e.message for p in self.plans for e in p.events if e.reason == reason]

    def with_policy(self, **changes: object) -> Sim:
        self.policy = replace(self.policy, **changes)  # type: ignore[arg-type]
        return self
