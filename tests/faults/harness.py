"""The fault suite's one harness: WordCount under the operator with steady input,
a fault, then the issue's four checks.

After every fault (issue 14): no record lost or counted twice (``finish``: the
committed output holds each word's counts 1..n exactly, through
``tests.operator.test_e2e_scaling.assert_exact``), balance reached again
(``Apps.balanced``), processing resumed within ``RESUME_BOUND`` seconds of the
fault's end (:class:`Progress`: every task's committed input offset advances
again), and never two owners of a task's output (:class:`Owners` samples every
pod's ``/metrics``; the exact counts catch a duplicate that reached the output).

The app, its prefill and its input come from tests/operator (``running``,
``wordcount``, ``merge``); this module adds only what watches a fault. Each
test file in tests/faults is one kind of fault; docs/reliability.md records
what they measured.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from segue.operator.observe.scrape import ScrapeError, WorkerReport, scrape
from tests.operator.e2e import Apps, OperatorProcess, SteadyInput, wait_for
from tests.operator.test_e2e_scaling import (
    PARTITIONS,
    assert_exact,
    merge,
    running,
    wordcount,
)

RESUME_BOUND = 15.0  # seconds from a fault's end until every task commits again (issue 14)
METRICS_PORT = 9400  # the worker's default; the suite's StreamApps keep it
NAME = "wc"  # the app's name in every fault test (``running`` creates it so)


@dataclass
class FaultRun:
    """A WordCount StreamApp, balanced, with prefilled state and steady input."""

    kafka: Any
    apps: Apps
    operator: OperatorProcess
    app_id: str
    source: str
    output: str
    why: Any  # () -> str: status, events, pod logs, the operator's log
    before: dict[str, int]
    producer: SteadyInput
    progress: Progress
    owners: Owners
    sent: dict[str, int] = field(default_factory=dict)

    def balanced(self, replicas: int, timeout: float = 180) -> float:
        """Seconds until the app is balanced at ``replicas`` (fails past ``timeout``)."""
        return wait_for(
            f"{replicas} pods balanced", lambda: self.apps.balanced(NAME, replicas), timeout,
            self.why,
        )  # fmt: skip

    def resumed(self, fault_end: float, bound: float = RESUME_BOUND) -> float:
        """Seconds from ``fault_end`` (monotonic) until every task committed again;
        fails, with the stalled tasks named, past ``bound``."""
        return self.progress.wait_resumed(fault_end, bound, self.why)

    def assert_no_stall(self, bound: float = RESUME_BOUND) -> float:
        """No task stood still (committed nothing) for ``bound`` s at any time while
        watched; the longest stall."""
        stall, where = self.progress.longest_stall()
        assert stall < bound, f"{where} committed nothing for {stall:.1f}s"
        return stall

    def finish(self) -> None:
        """Stop the input and the watchers; assert the exact counts and one owner."""
        self.stop()
        assert_exact(self.kafka, self.output, self.sent)
        self.owners.assert_one_owner()

    def stop(self) -> None:
        if not self.producer.stopped.is_set():
            self.sent = merge(self.before, self.producer.stop())
        self.progress.stop()
        self.owners.stop()


def start(
    kafka: Any,
    apps: Apps,
    operator: OperatorProcess,
    pod_runner: Any,
    *,
    replicas: int,
    lines: int = 3000,
    rate: float = 100,
    env: dict[str, str] | None = None,
    **scaling: Any,
) -> FaultRun:
    """Create WordCount (``replicas`` pods, ``lines`` of prefilled state, then
    ``rate`` lines/s; ``env`` for the pods), wait until balanced, and start watching
    progress and owners."""
    body, source, output = wordcount(kafka, NAME, replicas, env=env, **scaling)
    app_id = body["spec"]["applicationId"]
    why, before, producer = running(
        kafka, apps, operator, pod_runner, body=body, source=source, replicas=replicas,
        lines=lines, rate=rate, **{"enable.idempotence": True},  # a restart never duplicates
    )  # fmt: skip
    topics = [source, f"{app_id}-counts-store-repartition"]
    progress = Progress(kafka.bootstrap_servers, app_id, topics)
    owners = Owners(apps, NAME)
    progress.start()
    owners.start()
    run = FaultRun(
        kafka, apps, operator, app_id, source, output, why, before, producer, progress, owners
    )
    wait_for("every task committing", progress.all_moving, 60, why)
    return run


LEARNER_PACE = "300"  # records/s a learner restores: 6,000 lines take it seconds


def scaling_up(
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any, to: int = 4
) -> FaultRun:
    """WordCount on 2 pods with 6,000 lines of state, scaled to ``to``; returns once
    learners are restoring (paced, so they still are for some seconds)."""
    run = start(
        kafka, apps, operator, pod_runner, replicas=2, lines=6000, rate=100,
        env={"SEGUE_STANDBY_RESTORE_RATE": LEARNER_PACE},
    )  # fmt: skip
    try:
        apps.scale(NAME, to)
        wait_for("learners in flight", lambda: apps.learning(NAME), 60, run.why)
    except BaseException:
        run.stop()
        raise
    return run


@dataclass(frozen=True)
class Outage:
    """A component stopped, kept down, started again: seconds each part took, and the
    moment (monotonic) it served again, the fault's end."""

    stopped: float
    down: float
    started: float
    ended: float

    def __str__(self) -> str:
        return f"stop {self.stopped:.1f}s, down {self.down:.0f}s, start {self.started:.1f}s"


def outage(stop: Callable[[], None], start: Callable[[], None], downtime: float) -> Outage:
    """Stop a component, wait ``downtime`` s, start it again; started again whatever
    happens, so the session's shared component outlives a failing test."""
    began = time.monotonic()
    try:
        stop()
        stopped = time.monotonic()
        time.sleep(downtime)
    finally:
        restarting = time.monotonic()
        start()
    ended = time.monotonic()
    return Outage(stopped - began, restarting - stopped, ended - restarting, ended)


class Progress(threading.Thread):
    """The app's committed input offsets (its consumer group, every partition of
    every sub-topology's source: one per task), sampled every ``interval`` s.

    A task has processed and committed past a moment once its committed offset
    exceeds the one it had then. Samples fail while the broker is away; those
    moments simply have no sample."""

    def __init__(
        self, bootstrap: str, group: str, topics: list[str], interval: float = 0.25
    ) -> None:
        super().__init__(daemon=True)
        self.partitions = [TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
        )
        self.interval = interval
        self.samples: list[tuple[float, dict[str, int]]] = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                try:
                    found = self.consumer.committed(self.partitions, timeout=2)
                except KafkaException:
                    found = None  # the broker is away: no sample
                if found is not None:
                    sample = {f"{tp.topic}:{tp.partition}": tp.offset for tp in found}
                    with self.lock:
                        self.samples.append((time.monotonic(), sample))
                self.stopped.wait(self.interval)
        finally:
            self.consumer.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(10)

    def _at(self, moment: float) -> dict[str, int]:
        """The last sample taken at or before ``moment`` ({} if none)."""
        with self.lock:
            before = [s for t, s in self.samples if t <= moment]
        return before[-1] if before else {}

    def stalled(self, since: float) -> list[str]:
        """Partitions whose committed offset has not grown since ``since``."""
        then = self._at(since)
        with self.lock:
            later = [s for t, s in self.samples if t > since]
        if not later:
            return [f"{tp.topic}:{tp.partition}" for tp in self.partitions]
        moved: set[str] = set()
        for sample in later:
            moved |= {p for p, offset in sample.items() if offset > then.get(p, -1001)}
        return sorted(set(later[-1]) - moved)

    def all_moving(self) -> bool:
        """Every task committed something in the last 3 s."""
        return not self.stalled(time.monotonic() - 3)

    def wait_resumed(self, since: float, bound: float, why: Any) -> float:
        """Seconds from ``since`` until no partition is stalled (at most ``bound``)."""
        deadline = since + bound
        while True:
            left = self.stalled(since)
            if not left:
                return self._resumed_at(since) - since
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"processing not resumed {bound:.0f}s after the fault ended; "
                    f"stalled: {left}\n{why()}"
                )
            time.sleep(0.1)

    def _resumed_at(self, since: float) -> float:
        """When the last partition to move after ``since`` first moved."""
        then = self._at(since)
        with self.lock:
            later = [(t, s) for t, s in self.samples if t > since]
        first: dict[str, float] = {}
        for t, sample in later:
            for p, offset in sample.items():
                if offset > then.get(p, -1001):
                    first.setdefault(p, t)
        return max(first.values())

    def longest_stall(self) -> tuple[float, str]:
        """The longest time any partition's committed offset stood still, and which."""
        with self.lock:
            samples = list(self.samples)
        worst, which = 0.0, ""
        last: dict[str, tuple[float, int]] = {}
        for t, sample in samples:
            for p, offset in sample.items():
                seen = last.get(p)
                if seen is None or offset > seen[1]:
                    if seen is not None and t - seen[0] > worst:
                        worst, which = t - seen[0], p
                    last[p] = (t, offset)
        return worst, which


def running_actives(report: WorkerReport) -> set[str]:
    """The tasks a worker says it owns: active and running."""
    states = report.states
    return {
        t for t, role in report.roles.items() if role == "active" and states.get(t) == "running"
    }


@dataclass(frozen=True)
class Overlap:
    """Two or more pods reporting one task active and running, from ``first`` to
    ``last`` (monotonic seconds, consecutive samples), with each pod's records
    processed for the task at both ends (``segue_task_records_processed_total``)."""

    task: str
    pods: tuple[str, ...]
    first: float
    last: float
    processed_first: tuple[int, ...]
    processed_last: tuple[int, ...]

    @property
    def seconds(self) -> float:
        return self.last - self.first

    @property
    def both_processing(self) -> bool:
        """Every pod of the overlap processed the task's records during it."""
        return all(b > a for a, b in zip(self.processed_first, self.processed_last, strict=True))

    def __str__(self) -> str:
        moved = [b - a for a, b in zip(self.processed_first, self.processed_last, strict=True)]
        return f"{self.task} on {'+'.join(self.pods)} {self.seconds:.1f}s (processed {moved})"


# What two owners look like from outside: two pods processing one task's records for
# longer than the sampler's resolution. A pod that still says ``running`` but processes
# nothing is an old owner inside its final commit (or stuck in it while the broker is
# away): the new owner's fence serializes behind it at the transaction coordinator, so
# its output cannot interleave; such overlaps are reported, not failed. A pod cut off
# from the API processes until the new owner's fence fails its next produce or commit:
# at most about one commit interval (100 ms), below this bound. The exact counts
# (``FaultRun.finish``) catch any output written twice, whatever the sampler saw.
OVERLAP_BOUND = 1.0


class Owners(threading.Thread):
    """Polls every pod's worker ``/metrics`` (``segue_task_role``,
    ``segue_task_state``, ``segue_task_records_processed_total``) and records each
    time two pods say they run the same task as active: :attr:`overlaps`. Pod
    addresses come from the API (kept from the last good list while it is away)."""

    def __init__(self, apps: Apps, name: str, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.apps, self.name, self.interval = apps, name, interval
        self.addresses: dict[str, str] = {}
        self.overlaps: list[Overlap] = []
        self.polls = 0
        self.last: dict[str, WorkerReport] = {}  # pod -> its last report
        self.stopped = threading.Event()

    def run(self) -> None:
        open_: dict[str, Overlap] = {}
        listed = 0.0
        while not self.stopped.is_set():
            if time.monotonic() - listed > 1.0:
                try:
                    pods = self.apps.pods(self.name)
                    self.addresses = {
                        n: p.status.pod_ip for n, p in pods.items() if p.status.pod_ip
                    }
                    listed = time.monotonic()
                except Exception:  # the API server is away: keep the last addresses
                    pass
            now = time.monotonic()
            owners: dict[str, list[str]] = {}
            reports: dict[str, WorkerReport] = {}
            for pod, ip in sorted(self.addresses.items()):
                try:
                    reports[pod] = self.last[pod] = scrape(ip, METRICS_PORT, timeout=1.0)
                except ScrapeError:
                    continue
                for task in running_actives(reports[pod]):
                    owners.setdefault(task, []).append(pod)
            self.polls += 1
            for task, pods in owners.items():
                if len(pods) > 1:
                    counts = tuple(reports[p].processed.get(task, 0) for p in pods)
                    seen = open_.get(task)
                    if seen is None or seen.pods != tuple(pods):
                        seen = Overlap(task, tuple(pods), now, now, counts, counts)
                    open_[task] = replace(seen, last=now, processed_last=counts)
            for task in [t for t in open_ if len(owners.get(t, [])) < 2]:
                self.overlaps.append(open_.pop(task))
            self.stopped.wait(self.interval)
        self.overlaps.extend(open_.values())

    def stop(self) -> None:
        self.stopped.set()
        self.join(10)

    def two_owners(self) -> list[Overlap]:
        return [o for o in self.overlaps if o.seconds >= OVERLAP_BOUND and o.both_processing]

    def assert_one_owner(self) -> None:
        assert self.polls > 0, "the owner sampler never polled"
        assert not self.two_owners(), f"two owners of a task's output: {self.two_owners()}"

    def summary(self) -> str:
        """The overlaps seen, for the test's printed report."""
        return ", ".join(map(str, self.overlaps)) or "none"


def container_pid(apps: Apps, pod: str) -> int:
    """The worker process of ``pod`` (the pod runner's containerID is ``segue://<pid>``)."""
    status = apps.pods(NAME)[pod].status
    ids = [c.container_id for c in status.container_statuses or [] if c.container_id]
    assert ids, f"{pod}: no running container"
    return int(ids[0].removeprefix("segue://"))


def sigkill(apps: Apps, pod: str) -> int:
    """SIGKILL the pod's container (its process group), as the OOM killer or a
    crashed node would; the pod runner restarts it. Returns the killed pid."""
    pid = container_pid(apps, pod)
    os.killpg(pid, signal.SIGKILL)
    return pid
