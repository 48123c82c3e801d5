"""Kafka Streams' side: WordCount instances (``java/``), one JVM each, started and read by
the driver. Each instance's stdout events and stderr assignor verdicts are collected by a
reader thread per stream (``events``); *balanced* is when the leader says it will probe no
more after every instance has joined, timed at the last change of any instance's actives.

Kafka Streams makes its own repartition and changelog topics; static membership is on
(``group.instance.id`` = the instance name), one standby, exactly-once v2, the default
``HighAvailabilityTaskAssignor``; only ``probing.rebalance.interval.ms`` is lowered.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from .events import (
    RestoreEvent,
    TaskEvent,
    assignor_verdict,
    held,
    is_error,
    last_change,
    parse_line,
)
from .events import peak_stateful as _peak
from .events import restored_records as _restored

JAVA = Path(__file__).resolve().parent / "java"
# Both sides' JVMs, sized for a small box: up to six of them, Kafka and
# the control plane share two cores here. The serial collector runs no GC threads
# beside the app, and C1 alone spares each JVM's first minute of C2 compiling, which
# a scale-out's new instances spend exactly while the group rebalances (the stack's
# broker runs C1 alone for the same reason). Measured: docs/benchmarks.md.
JVM = ["-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
LOGGING = [
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
    # the group's joins and syncs, timed: where a rebalance waits (docs/benchmarks.md)
    "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.consumer.internals."
    "ConsumerCoordinator=info",
    "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.streams.processor.internals."
    "StreamsPartitionAssignor=info",
    # when each instance triggers the follow-up rebalance it was asked for
    "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.streams.processor.internals.StreamThread=info",
]


def classpath() -> str:
    """The built jar and its dependencies (``run.sh`` builds them with Maven)."""
    deps = JAVA / "target" / "classpath.txt"
    jar = JAVA / "target" / "kstreams-wordcount-0.1.0.jar"
    if not deps.exists() or not jar.exists():
        raise SystemExit(f"{jar} is not built: run bash bench/kstreams/run.sh")
    return f"{jar}{os.pathsep}{deps.read_text().strip()}"


class Instance:
    """One JVM; its reports accumulate in ``tasks``, ``restores`` and ``verdicts``."""

    def __init__(self, name: str, args: dict[str, str], state_dir: Path, log: Path) -> None:
        self.name = name
        self.tasks: list[TaskEvent] = []
        self.restores: list[RestoreEvent] = []
        self.verdicts: list[tuple[float, bool]] = []
        self.errors: list[str] = []
        argv = [
            f"{k}={v}" for k, v in {**args, "instance": name, "state-dir": str(state_dir)}.items()
        ]
        self.log = log.open("w", buffering=1)
        self.proc = subprocess.Popen(
            [
                "java",
                *JVM,
                *LOGGING,
                "-cp",
                classpath(),
                "segue.bench.WordCountInstance",
                *argv,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        threading.Thread(target=self._stdout, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._stderr, args=(self.proc.stderr,), daemon=True).start()

    def _stdout(self, stream: IO[str]) -> None:
        for line in stream:
            event = parse_line(line)
            (self.tasks if isinstance(event, TaskEvent) else self.restores).append(event)  # type: ignore[arg-type]

    def _stderr(self, stream: IO[str]) -> None:
        for line in stream:
            self.log.write(line)
            verdict = assignor_verdict(line)
            if verdict is not None:
                self.verdicts.append((time.time(), verdict))
            if is_error(line):
                self.errors.append(line.strip())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


class KafkaStreamsApp:
    """The instances of one run: ``scale(n)`` starts more, ``balanced(n)`` is the test."""

    def __init__(self, args: dict[str, str], *, partitions: int, work: Path) -> None:
        """``args``: the Java instance's bootstrap, application, input, output, probing-ms."""
        self.args, self.partitions, self.work = args, partitions, work
        self.instances: list[Instance] = []

    def scale(self, replicas: int) -> None:
        while len(self.instances) < replicas:
            name = f"ks-{len(self.instances)}"
            self.instances.append(
                Instance(name, self.args, self.work / name, self.work / f"{name}.log")
            )

    def shrink(self, replicas: int) -> None:
        """Stop the newest instances down to ``replicas``, as a scale-down's pods get
        SIGTERM: each closes its KafkaStreams (Kafka Streams' own shutdown hook)."""
        leaving, self.instances = self.instances[replicas:], self.instances[:replicas]
        for i in leaving:
            i.proc.send_signal(signal.SIGTERM)
        for i in leaving:
            i.stop()

    def kill(self, index: int) -> None:
        """SIGKILL one instance and start it again with its name and state directory, as
        a pod's container is restarted."""
        old = self.instances[index]
        old.proc.kill()
        old.proc.wait(10)
        old.log.close()
        self.instances[index] = Instance(
            old.name, self.args, self.work / old.name, self.work / f"{old.name}-again.log"
        )

    def settled(self, replicas: int) -> bool:
        """Every task active once, spread within one, every instance running."""
        if len(self.instances) != replicas or not all(i.tasks for i in self.instances):
            return False
        latest = [i.tasks[-1] for i in self.instances]
        actives = sorted(t for e in latest for t in e.active)
        expected = sorted(f"{s}_{p}" for s in (0, 1) for p in range(self.partitions))
        counts = [e.stateful_active for e in latest]
        return (
            all(e.state == "RUNNING" for e in latest)
            and actives == expected
            and max(counts) - min(counts) <= 1
        )

    def balanced(self, replicas: int, since: float, quiet: float = 3.0) -> float | None:
        """When probing stopped moving tasks (Unix s): the leader's latest verdict, given
        after the scale, says "no followup", ``quiet`` seconds have passed since, and the
        tasks are settled; else None."""
        verdicts = sorted(v for i in self.instances for v in i.verdicts)
        if not verdicts or verdicts[-1][0] < since or not verdicts[-1][1]:
            return None
        if time.time() - verdicts[-1][0] < quiet or not self.settled(replicas):
            return None
        return max(last_change(i.tasks) or 0.0 for i in self.instances)

    def failures(self) -> str:
        dead = [
            f"{i.name} exited {i.proc.returncode}"
            for i in self.instances
            if i.proc.poll() is not None
        ]
        errors = [e for i in self.instances for e in i.errors[-3:]]
        return "; ".join(dead + errors)

    def peak_stateful(self, since: float) -> int:
        return max(_peak(i.tasks, since) for i in self.instances)

    def restored(self, since: float) -> dict[int, int]:
        total: dict[int, int] = {}
        for i in self.instances:
            for p, n in _restored(i.restores, since, held(i.tasks, since)).items():
                total[p] = total.get(p, 0) + n
        return total

    def final_stateful(self) -> list[int]:
        return [i.tasks[-1].stateful_active for i in self.instances]

    def stop(self) -> None:
        for i in self.instances:
            i.stop()
