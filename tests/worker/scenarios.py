"""Multi-step worker scenarios shared by the integration tests and ``bench/worker``.

:func:`handover` runs the Tally app (``segue.worker.apps.tally``) on two worker
processes while a producer writes at a steady rate, and moves every active task
from one worker to the other ``rounds`` times, each time only after the
receiving worker, a learner, has caught up. It then checks the committed output
is exact (per key the counts run 1..n with n the records produced) and measures
each handover's pause per task: from the last record the old owner committed to
the first record the new owner committed (``at`` of Tally's output).
"""

from __future__ import annotations

import itertools
import json
import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from .harness import WorkerProcess, assignment, create_topics, publish, read_committed


@dataclass
class HandoverResult:
    produced: int
    pauses: list[float] = field(default_factory=list)  # seconds, one per task per handover
    handovers: int = 0

    def percentile(self, q: float) -> float:
        ordered = sorted(self.pauses)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    def summary(self) -> str:
        if not self.pauses:
            return "no pauses measured"
        return (
            f"{self.handovers} handovers x tasks = {len(self.pauses)} pauses: "
            f"p50 {self.percentile(0.5) * 1000:.0f} ms, p99 {self.percentile(0.99) * 1000:.0f} ms, "
            f"max {max(self.pauses) * 1000:.0f} ms, "
            f"mean {statistics.mean(self.pauses) * 1000:.0f} ms"
        )


class SteadyProducer(threading.Thread):
    """Writes ``rate`` records/s, key ``k<j>`` always to partition ``j % partitions``."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, keys: int, rate: float) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
        self.topic, self.partitions, self.keys, self.rate = topic, partitions, keys, rate
        self.sent: dict[str, int] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        i = 0
        while not self.stopped.is_set():
            due = start + i / self.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(min(delay, 0.05))
                continue
            j = i % self.keys
            key = f"k{j}"
            self.producer.produce(self.topic, key=key, value=str(i), partition=j % self.partitions)
            self.sent[key] = self.sent.get(key, 0) + 1
            self.producer.poll(0)
            i += 1
        assert self.producer.flush(30) == 0

    def stop(self) -> int:
        self.stopped.set()
        self.join(60)
        return sum(self.sent.values())


def _caught_up(worker: WorkerProcess, tasks: list[str], role: str) -> bool:
    for task in tasks:
        if worker.metric("segue_task_role", task=task, role=role) != 1.0:
            return False
        if worker.metric("segue_task_lag", task=task) != 0.0:
            return False
    return True


def handover(
    *,
    bootstrap: str,
    kube_api: Any,
    kubeconfig: Path,
    namespace: str,
    workdir: Path,
    rounds: int,
    partitions: int = 4,
    keys: int = 64,
    rate: float = 1000.0,
    settle: float = 1.0,
    extra: list[str] | None = None,
) -> HandoverResult:
    tag = uuid.uuid4().hex[:8]
    app_id, source, output = f"tally-{tag}", f"tally-in-{tag}", f"tally-out-{tag}"
    configmap = f"{app_id}-assignment"
    create_topics(bootstrap, {source: partitions, output: partitions})
    tasks = [f"0_{p}" for p in range(partitions)]
    members = ["w0", "w1"]
    workers = {
        m: WorkerProcess(
            app="segue.worker.apps.tally:topology",
            member=m,
            namespace=namespace,
            configmap=configmap,
            bootstrap=bootstrap,
            state_dir=workdir / m,
            kubeconfig=kubeconfig,
            log_dir=workdir,
            app_args={"application_id": app_id, "input": source, "output": output},
            extra=extra,
        )
        for m in members
    }
    generation = 1
    publish(
        kube_api,
        namespace,
        configmap,
        assignment(app_id, generation, {"w0": {"active": tasks}, "w1": {"learning": tasks}}),
    )
    producer = SteadyProducer(bootstrap, source, partitions, keys, rate)
    result = HandoverResult(produced=0)
    try:
        for w in workers.values():
            w.start()
        workers["w0"].wait_ready()
        producer.start()
        owner, learner = "w0", "w1"
        for _ in range(rounds):
            workers[learner].wait_for(
                "learner caught up",
                lambda w=workers[learner]: _caught_up(w, tasks, "learning"),
                120,
            )
            time.sleep(settle)  # the old owner processes for a while before each move
            generation += 1
            publish(
                kube_api,
                namespace,
                configmap,
                assignment(
                    app_id, generation, {learner: {"active": tasks}, owner: {"learning": tasks}}
                ),
            )
            owner, learner = learner, owner
            workers[owner].wait_generation(generation)
            workers[owner].wait_ready()
            result.handovers += 1
        time.sleep(settle)
        result.produced = producer.stop()
        expected = dict(producer.sent)
        records = read_committed(
            bootstrap, output, lambda r: len(r) >= result.produced, timeout=120
        )
        check_exact(records, expected)
        result.pauses = _pauses([json.loads(v) for _, _, _, v in records], partitions)
    finally:
        producer.stopped.set()
        for w in workers.values():
            w.close()
    return result


def check_exact(records: list[Any], expected: dict[str, int]) -> None:
    """Tally's committed output is exact: per key the counts are 1..n, n = records sent."""
    counts: dict[str, list[int]] = {}
    for _, _, _, value in records:
        doc = json.loads(value)
        counts.setdefault(doc["key"], []).append(doc["count"])
    for key, n in expected.items():
        got = counts.get(key, [])
        assert sorted(got) == list(range(1, n + 1)), (
            f"key {key}: {len(got)} outputs for {n} inputs; duplicates or gaps: "
            f"{sorted(set(range(1, n + 1)) ^ set(got))[:10]}"
        )
    assert set(counts) == set(expected), set(counts) ^ set(expected)


def _pauses(outputs: list[dict[str, Any]], partitions: int) -> list[float]:
    by_task: dict[int, list[dict[str, Any]]] = {}
    for doc in outputs:
        task = int(doc["key"][1:]) % partitions
        by_task.setdefault(task, []).append(doc)
    pauses: list[float] = []
    for docs in by_task.values():
        docs.sort(key=lambda d: d["at"])
        for before, after in itertools.pairwise(docs):
            if before["by"] != after["by"]:
                pauses.append(after["at"] - before["at"])
    return pauses
