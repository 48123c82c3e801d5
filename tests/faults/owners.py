"""Who owns each task, as the workers say: every pod's ``/metrics`` sampled, and each
time two pods report one task active and running recorded. The fault suite's watch
for two owners of a task's output (issue 14); ``harness`` starts it with the app.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from segue.operator.observe.scrape import ScrapeError, WorkerReport, scrape
from segue.stack.apps import Apps

METRICS_PORT = 9400  # the worker's default; the suite's StreamApps keep it


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
