"""The simulator's world as plain mutable dataclasses: the hot loop touches only these.

A :class:`Cluster` is what exists (pods and their local state, the tasks with their
changelog ends and input backlogs) plus the assignment in force. Controllers
(:mod:`.policies`) change the assignment and the pods; :mod:`.physics` moves time
forward; neither knows which controller is in charge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from segue.operator.scaling import Published, Roles
from segue.protocol.tasks import task_id, task_sort_key

from .scenario import Scenario


@dataclass
class Task:
    subtopology: int
    partition: int
    stateful: bool
    record_bytes: int
    restore_rate: float  # changelog records/s per copy
    changelog_ratio: float
    end: float = 0.0  # changelog end offset (records)
    backlog: float = 0.0  # input records waiting


@dataclass
class Pod:
    name: str
    created: float
    up_at: float  # running from then on
    applied: int = 0  # the generation it runs
    restored: dict[str, float] = field(default_factory=dict)  # task -> changelog offset

    def up(self, now: float) -> bool:
        return now >= self.up_at


@dataclass
class Cluster:
    app: str
    replicas: int  # what the spec asks for now
    startup_delay: float
    pod_rate: float
    tasks: dict[str, Task] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    published: Published | None = None
    running: dict[str, str] = field(default_factory=dict)  # task -> pod processing it
    eager: bool = False  # a new generation stops every task, not only the moved ones
    restoring: dict[tuple[str, str], float] = field(default_factory=dict)  # last tick's rates
    initial: dict[int, int] = field(default_factory=dict)  # sub-topology -> partitions at t=0
    sources: dict[int, int] = field(default_factory=dict)  # ... and now (expansions)
    _inflow: tuple[tuple[float, int], dict[str, float]] | None = field(
        default=None, repr=False, compare=False
    )
    # Bumped by every change a controller or an event makes (a generation, a pod created
    # or deleted, partitions added): physics alone moves the cluster between two bumps,
    # so a tick computed for one instant still holds there if the version has not moved.
    version: int = field(default=0, compare=False)

    def inflow(self, rate: float) -> dict[str, float]:
        """Input records/s per task: a sub-topology's total input (``rate`` per initial
        partition; an expansion spreads the same producers wider) over its tasks. Read
        only: the same dict is handed out until the rate or the task count changes."""
        key = (rate, len(self.tasks))  # tasks are only ever added (an expansion)
        if self._inflow is not None and self._inflow[0] == key:
            return self._inflow[1]
        count: dict[int, int] = {}
        for task in self.tasks.values():
            count[task.subtopology] = count.get(task.subtopology, 0) + 1
        flows = {
            t: rate * self.initial[x.subtopology] / count[x.subtopology]
            for t, x in self.tasks.items()
        }
        self._inflow = (key, flows)
        return flows

    def next_generation(self, members: dict[str, Roles]) -> Published:
        return Published((self.published.generation if self.published else 0) + 1, members)

    def publish(self, new: Published) -> None:
        """Put a new generation in force; tasks that change owner stop at once."""
        owner = {t: m for m, r in new.members.items() for t in r.active}
        for t, p in list(self.running.items()):
            if self.eager or owner.get(t) != p:
                del self.running[t]
        self.published = new
        self.version += 1

    def create(self, name: str, now: float) -> None:
        if name not in self.pods:
            self.pods[name] = Pod(name, now, now + self.startup_delay)
            self.version += 1

    def delete(self, name: str) -> None:
        self.pods.pop(name, None)
        self.version += 1
        for t, p in list(self.running.items()):
            if p == name:
                del self.running[t]

    def owners(self) -> dict[str, str]:
        held = self.published.members if self.published else {}
        return {t: m for m, r in held.items() for t in r.active}

    def lag(self, pod: Pod, task: str) -> float:
        behind = self.tasks[task].end - pod.restored.get(task, 0.0)
        return behind if behind > 0.0 else 0.0  # max(0.0, behind) without the call


def pod_name(app: str, ordinal: int) -> str:
    return f"{app}-{ordinal}"


def initial(scenario: Scenario) -> Cluster:
    """The app at t=0: ``replicas`` pods up, tasks as ``scenario.assignment`` places them
    (else dealt round-robin), every store current."""
    c = Cluster(scenario.app, scenario.replicas, scenario.startup_delay, scenario.pod_rate)
    for sub in scenario.subtopologies:
        c.initial[sub.id] = c.sources[sub.id] = sub.partitions
        for p in range(sub.partitions):
            size = sub.state_bytes[p] if sub.stateful else 0
            c.tasks[task_id(sub.id, p)] = Task(
                sub.id,
                p,
                sub.stateful,
                sub.record_bytes,
                sub.restore_rate,
                sub.changelog_ratio,
                end=size / sub.record_bytes,
            )
    names = [pod_name(c.app, i) for i in range(scenario.replicas)]
    dealt: dict[str, list[str]] = {n: list(scenario.assignment.get(n, ())) for n in names}
    if not scenario.assignment:
        for i, t in enumerate(sorted(c.tasks, key=lambda t: (c.tasks[t].partition, t))):
            dealt[names[i % len(names)]].append(t)
    for n in names:
        c.pods[n] = Pod(n, -scenario.startup_delay, 0.0, applied=1)
        c.pods[n].restored = {t: c.tasks[t].end for t in dealt[n] if c.tasks[t].stateful}
    c.published = Published(
        1, {n: Roles(active=tuple(sorted(dealt[n], key=task_sort_key))) for n in names}
    )
    c.running = {t: n for n, ts in dealt.items() for t in ts}
    return c
