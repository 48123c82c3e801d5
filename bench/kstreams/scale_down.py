"""Scale-downs side by side with Kafka Streams, with Kafka's default session timeout
(45 s): the longest any input partition commits nothing (docs/benchmarks.md, "Scale-downs
with Kafka Streams' defaults").

The same WordCount as ``run`` (``java/``'s ``WordCountInstance``: exactly-once v2, one
standby), on fresh topics per run, ``--lines`` lines prefilled, then steady input at
``--rate`` lines/s. Cases: ``FROM:TO``, and ``FROM:TO+kill`` which SIGKILLs one of the
remaining instances right after the scale-down settled. Sides:

- ``kstreams``: Kafka Streams alone, its default ``HighAvailabilityTaskAssignor``, static
  membership (``group.instance.id`` = the instance's name), the leaving instances
  stopped with SIGTERM as a scale-down's pods are; a killed one is started again with
  its name and state, as a pod's container is restarted;
- ``plugin``: Kafka Streams + Segue, the StreamApp scaled with ``/scale`` (``plugin_side``);
  a killed pod's container is restarted by the pod runner.

Per run: the longest gap between two advances of any input partition's committed offset
(its source topic and its repartition topic: every task of both sub-topologies), every
gap that ends once every partition was seen committing (just before the scale request)
until ``--after`` seconds past settled; when it settled; and counts checked exact, read
while the app still runs. Settled: Kafka Streams' every task active once, spread within one, every
instance running; Segue's ``Balanced`` with every pod ready. ::

    .venv/bin/python -m bench.kstreams.scale_down [--sides kstreams,plugin]
        [--cases 6:3 3:2 3:2+kill] [--runs 1] [--lines 20000] [--rate 100] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.host import describe
from bench.operator.cluster import new_namespace, operator_stack
from segue.stack.apps import text_input
from tests.faults.progress import Progress
from tests.operator.e2e import exact_counts, wait_for
from tests.operator.test_e2e_scaling import PARTITIONS, merge, prefill
from tests.worker.harness import create_topics, read_committed

from .kstreams_side import KafkaStreamsApp
from .plugin_side import NAME, PluginApp

SIDES = {"kstreams": "Kafka Streams", "plugin": "Kafka Streams + Segue"}
WORDS = 60  # distinct words, prefilled and steady (as ``test_e2e_scaling.prefill``)


@dataclass(frozen=True)
class Case:
    before: int
    after: int
    kill: bool

    def __str__(self) -> str:
        return f"{self.before}->{self.after}" + (" + kill" if self.kill else "")


@dataclass(frozen=True)
class Result:
    side: str
    case: Case
    gap: float  # the longest commit gap of any input partition, seconds
    where: str
    settled: float  # seconds from the scale request until settled
    again: float | None  # seconds from the kill until settled again


class KsSide:
    """Kafka Streams alone, as ``run.run_kstreams`` starts it."""

    def __init__(self, stack: Any, args: argparse.Namespace, work: Path, replicas: int) -> None:
        tag = uuid.uuid4().hex[:6]
        self.application, self.source = f"ks-wc-{tag}", f"text-{tag}"
        self.output = f"counts-{tag}"
        create_topics(
            stack.kafka.bootstrap_servers, {self.source: PARTITIONS, self.output: PARTITIONS}
        )
        java = {
            "bootstrap": stack.kafka.bootstrap_servers,
            "application": self.application,
            "input": self.source,
            "output": self.output,
            "probing-ms": str(args.probing_ms),
        }
        self.app = KafkaStreamsApp(java, partitions=PARTITIONS, work=work)
        self.app.scale(replicas)

    def settled(self, replicas: int) -> bool:
        return self.app.settled(replicas)

    def scale(self, replicas: int) -> None:
        self.app.shrink(replicas)

    def kill(self) -> None:
        self.app.kill(0)

    def diagnose(self) -> str:
        return self.app.failures()

    def stop(self) -> None:
        self.app.stop()


class PluginSide:
    """Kafka Streams + Segue, as ``plugin_side.run_plugin`` starts it."""

    def __init__(self, stack: Any, api: Any, args: argparse.Namespace, work: Path, replicas: int):
        namespace = f"ks-down-{uuid.uuid4().hex[:6]}"
        new_namespace(api, namespace)
        self.app = PluginApp(
            stack, api, namespace=namespace, replicas=replicas, probing_ms=args.probing_ms,
            work=work, learner_promotion="eager",
        )  # fmt: skip
        self.application, self.source, self.output = (
            self.app.application,
            self.app.source,
            self.app.output,
        )
        self.app.start()

    def settled(self, replicas: int) -> bool:
        return self.app.balanced(replicas)

    def scale(self, replicas: int) -> None:
        self.app.scale(replicas)

    def kill(self) -> None:
        pod = sorted(self.app.apps.pods(NAME).values(), key=lambda p: p.metadata.name)[0]
        container = pod.status.container_statuses[0].container_id
        os.killpg(int(container.removeprefix("segue://")), signal.SIGKILL)

    def diagnose(self) -> str:
        return self.app.diagnose()

    def stop(self) -> None:
        self.app.stop()


def run(side: Any, stack: Any, args: argparse.Namespace, name: str, case: Case) -> Result:
    bootstrap = stack.kafka.bootstrap_servers
    wait_for(f"{case.before} settled", lambda: side.settled(case.before), 300, side.diagnose)
    sent = prefill(stack.kafka, side.source, args.lines)
    topics = [side.source, f"{side.application}-counts-store-repartition"]
    progress = Progress(bootstrap, side.application, topics)
    producer = text_input(bootstrap, side.source, WORDS, args.rate)
    producer.start()
    progress.start()
    again = None
    try:
        try:
            wait_for("every task committing", progress.all_moving, 300, side.diagnose)
            asked = time.monotonic()
            side.scale(case.after)
            wait_for(f"{case.after} settled", lambda: side.settled(case.after), 600, side.diagnose)
            settled = time.monotonic() - asked
            if case.kill:
                killed = time.monotonic()
                side.kill()
                time.sleep(2)  # the kill is seen before "settled" is asked again
                wait_for("settled again", lambda: side.settled(case.after), 600, side.diagnose)
                again = time.monotonic() - killed
            time.sleep(args.after)
            # a partition that stopped is measured to where it committed again
            wait_for("every task committing again", progress.all_moving, 300, side.diagnose)
            gap, where = progress.longest_stall()
        finally:
            sent = merge(sent, producer.stop())
            progress.stop()
        total = sum(sent.values())
        # read while the side runs: its stop would cut off the input's last lines
        records = read_committed(bootstrap, side.output, lambda r: len(r) >= total, 300)
    finally:
        side.stop()
    exact_counts(records, sent)
    return Result(name, case, gap, where, settled, again)


def table(results: list[Result], host: str) -> str:
    lines = [
        host,
        "",
        "| case | side | run | longest commit gap s (partition) | settled s "
        "| settled after the kill s |",
        "|---|---|---|---|---|---|",
    ]
    by: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        by.setdefault((str(r.case), r.side), []).append(r)
    for (case, side), rs in by.items():
        for n, r in enumerate(rs, 1):
            kill = "" if r.again is None else f"{r.again:.1f}"
            lines.append(
                f"| {case} | {side} | {n} | {r.gap:.2f} ({r.where}) | {r.settled:.1f} | {kill} |"
            )
        if len(rs) > 1:
            gap = statistics.median(r.gap for r in rs)
            lines.append(f"| {case} | {side} | median of {len(rs)} | {gap:.2f} | | |")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> list[Result]:
    host = describe()
    print(host, flush=True)
    results: list[Result] = []
    with operator_stack() as (stack, api), tempfile.TemporaryDirectory(prefix="segue-down-") as tmp:
        for case in args.cases:
            for name in args.sides:
                for _ in range(args.runs):
                    work = (
                        args.workdir or Path(tmp)
                    ) / f"{name}-{case.before}-{case.after}-{len(results) + 1}"
                    work.mkdir(parents=True)
                    side = (
                        KsSide(stack, args, work, case.before)
                        if name == "kstreams"
                        else PluginSide(stack, api, args, work, case.before)
                    )
                    result = run(side, stack, args, SIDES[name], case)
                    results.append(result)
                    print(
                        f"{result.side} {case}: longest commit gap {result.gap:.2f}s "
                        f"({result.where}), settled {result.settled:.1f}s"
                        + ("" if result.again is None else f", {result.again:.1f}s after the kill"),
                        flush=True,
                    )
    print(table(results, host))
    return results


def _case(text: str) -> Case:
    scale, plus, kill = text.partition("+")
    before, _, after = scale.partition(":")
    if not (before.isdigit() and after.isdigit() and int(before) > int(after) > 0) or (
        plus and kill != "kill"
    ):
        raise argparse.ArgumentTypeError(
            f"case {text!r}: expected FROM:TO or FROM:TO+kill, FROM > TO > 0"
        )
    return Case(int(before), int(after), bool(plus))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.kstreams.scale_down", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--sides", type=lambda s: [x for x in s.split(",") if x], default=list(SIDES))
    p.add_argument(
        "--cases", nargs="+", type=_case, default=[_case("6:3"), _case("3:2"), _case("3:2+kill")]
    )
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--lines", type=int, default=20_000, help="lines prefilled")
    p.add_argument("--rate", type=float, default=100.0, help="input lines/s")
    p.add_argument(
        "--probing-ms",
        type=int,
        default=60_000,
        help="Kafka Streams' probing.rebalance.interval.ms",
    )
    p.add_argument("--after", type=float, default=15.0, help="seconds watched once settled")
    p.add_argument("--workdir", type=Path, default=None)
    return p


if __name__ == "__main__":
    main(parser().parse_args())
