"""What the show watches, twice a second: the StreamApp's status, its pods, each pod's
``/metrics`` (parsed by the operator's own ``scrape``) and the input's lag; from one
look to the next it notices every task that changed hands.

:class:`Monitor` is a thread that keeps the latest :class:`Look` (the live view draws
it), a timeline of :class:`Sample` rows (the report plots them) and the list of
:class:`Move` (a task's running owner changed; ``tally`` measures each one's pause
from the output). Nothing here decides anything: it reads and remembers.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from kubernetes import client

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.api.status import StreamAppStatus
from segue.operator.observe.scrape import ScrapeError, WorkerReport, scrape
from segue.operator.status.waiting import waiting  # what `segue status` says, too
from segue.protocol.names import DEFAULT_METRICS_PORT

TICK = 0.5  # seconds between looks


@dataclass(frozen=True)
class PodLook:
    name: str
    uid: str
    ip: str | None
    ready: bool
    deleting: bool
    role: str  # the StreamApp's member role, or "-" before the operator lists it
    report: WorkerReport | None  # None: its /metrics did not answer


@dataclass(frozen=True)
class Look:
    at: float
    replicas: int  # spec.replicas (what kubectl scale or the HPA asked for)
    status: StreamAppStatus
    pods: list[PodLook]
    lag: int | None  # input records not yet committed by the app
    waiting: str  # what the operator says it waits for

    def owners(self) -> dict[str, tuple[str, str]]:
        """task -> (name, uid) of the pod that runs it as active and running."""
        found: dict[str, tuple[str, str]] = {}
        for pod in self.pods:
            if pod.report is None:
                continue
            for task, role in pod.report.roles.items():
                if role == "active" and pod.report.states.get(task) == "running":
                    found[task] = (pod.name, pod.uid)
        return found


@dataclass(frozen=True)
class Move:
    """A task's running owner changed between two looks (``before`` .. ``seen``): another
    pod, or the same name's next instance (its pod was killed and came back)."""

    task: str
    old: str
    new: str
    before: float  # the last look with the old owner running it
    seen: float  # the first look with the new owner running it
    failover: bool  # the old owner's pod was killed


@dataclass(frozen=True)
class Sample:
    at: float
    replicas: int
    pods: int
    roles: dict[str, int]  # member role -> pods
    lag: int | None
    active: dict[str, int]  # pod -> active tasks


class Monitor(threading.Thread):
    def __init__(
        self, api: Any, namespace: str, app: str, *, bootstrap: str, group: str, input_topic: str
    ) -> None:
        super().__init__(daemon=True, name="demo-monitor")
        self.api, self.namespace, self.app = api, namespace, app
        self.bootstrap, self.group, self.input_topic = bootstrap, group, input_topic
        self.look: Look | None = None
        self.samples: list[Sample] = []
        self.moves: list[Move] = []
        self.killed: set[str] = set()  # uids of pods a step killed
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self._custom: Any = client.CustomObjectsApi(self.api)
        self._core: Any = client.CoreV1Api(self.api)
        self._consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group})
        self._last_owner: dict[str, tuple[tuple[str, str], float]] = {}
        self.first_status: float | None = None  # the first look at which the app had a status
        self.first_ready: float | None = None  # ... and at which one of its pods was Ready

    def run(self) -> None:
        try:
            while not self.stopped.wait(TICK):
                try:
                    look = self._look()
                except Exception:  # the stack is going down, or a passing error: look again
                    continue
                with self.lock:
                    self._remember(look)
        finally:
            self._consumer.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(10)

    def _look(self) -> Look:
        obj = self._custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, self.app
        )
        status = StreamAppStatus.model_validate(obj.get("status") or {})
        roles = {m.name: m.role for m in status.members or []}
        pods = []
        items = self._core.list_namespaced_pod(
            self.namespace, label_selector=f"segue.dev/app={self.app}"
        ).items
        for pod in sorted(items, key=lambda p: p.metadata.name):
            ip = pod.status.pod_ip
            report = None
            if ip and not pod.metadata.deletion_timestamp:
                try:
                    report = scrape(ip, DEFAULT_METRICS_PORT, timeout=0.5)
                except ScrapeError:
                    report = None
            ready = any(
                c.type == "Ready" and c.status == "True" for c in pod.status.conditions or []
            )
            pods.append(
                PodLook(
                    name=pod.metadata.name,
                    uid=pod.metadata.uid,
                    ip=ip,
                    ready=ready,
                    deleting=pod.metadata.deletion_timestamp is not None,
                    role=roles.get(pod.metadata.name, "-"),
                    report=report,
                )
            )
        return Look(
            at=time.time(),
            replicas=int(obj["spec"].get("replicas", 0)),
            status=status,
            pods=pods,
            lag=self._lag(),
            waiting=waiting(status),
        )

    def _lag(self) -> int | None:
        try:
            topic = self._consumer.list_topics(self.input_topic, timeout=2).topics[self.input_topic]
            parts = [TopicPartition(self.input_topic, p) for p in topic.partitions]
            committed = self._consumer.committed(parts, timeout=2)
            total = 0
            for tp in committed:
                low, high = self._consumer.get_watermark_offsets(tp, timeout=2)
                total += max(0, high - (tp.offset if tp.offset >= 0 else low))
        except Exception:
            return None
        return total

    def _remember(self, look: Look) -> None:
        self.look = look
        if self.first_status is None and look.status.conditions:
            self.first_status = look.at
        if self.first_ready is None and any(p.ready for p in look.pods):
            self.first_ready = look.at
        for task, owner in look.owners().items():
            last = self._last_owner.get(task)
            if last is not None and last[0] != owner:
                (old, old_uid), before = last
                failover = old_uid in self.killed
                self.moves.append(Move(task, old, owner[0], before, look.at, failover))
            self._last_owner[task] = (owner, look.at)
        roles: dict[str, int] = {}
        for member in look.status.members or []:
            roles[member.role] = roles.get(member.role, 0) + 1
        self.samples.append(
            Sample(
                at=look.at,
                replicas=look.replicas,
                pods=len([p for p in look.pods if not p.deleting]),
                roles=roles,
                lag=look.lag,
                active={
                    p.name: sum(1 for r in p.report.roles.values() if r == "active")
                    for p in look.pods
                    if p.report is not None
                },
            )
        )
