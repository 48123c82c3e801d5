"""Side by side with Kafka Streams: seed 003's WordCount scaled 2->3 and 3->6 by Kafka
Streams (its default ``HighAvailabilityTaskAssignor``, static membership, one standby) and
by Segue, on one broker with identical input and state (docs/benchmarks.md, "Side by side
with Kafka Streams").

Every run gets fresh topics (6 partitions, as in seed 003): the app starts on the smaller
count, then ``--words`` distinct words are written (one word a line, keyed by the word) and
counted, so each counting task holds the same changelog; then steady input at ``--rate``
lines/s, the scale request, and the wait until balanced. Per run: time until balanced, the
most stateful actives one instance held, changelog records and bytes restored, the longest
pause of a task's output and the records processed late (``measure``). Counts are checked
exact. Build the Java side first: ``bash bench/kstreams/run.sh`` does both.

    .venv/bin/python -m bench.kstreams.run [--words 240000] [--rate 300] [--probing-ms 60000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from bench.operator.cluster import new_namespace, operator_stack
from segue.stack.apps import SteadyInput
from tests.operator.e2e import exact_counts, wait_for
from tests.operator.test_e2e_scaling import PARTITIONS
from tests.worker.harness import create_topics, produce

from .kstreams_side import KafkaStreamsApp
from .measure import (
    Lateness,
    Seen,
    TopicReader,
    input_times,
    lateness,
    read_all,
    record_bytes,
)
from .moves import counting_moves, reports_timeline
from .report import Row, table
from .segue_side import SegueApp
from .trace import parse_operator, parse_worker, trace
from .trace import table as trace_table

SCALES = ((2, 3), (3, 6))


class Workload:
    """Input written and output followed for one run."""

    def __init__(self, bootstrap: str, source: str, output: str, args: argparse.Namespace) -> None:
        self.bootstrap, self.source, self.args = bootstrap, source, args
        self.reader = TopicReader(bootstrap, output, PARTITIONS)
        self.reader.start()
        self.sent: dict[str, int] = {}
        self.steady: SteadyInput | None = None
        self.outputs: list[Seen] = []
        self.started = self.stopped = 0.0

    def prefill(self) -> None:
        words = [f"w{i}" for i in range(self.args.words)]
        produce(self.bootstrap, self.source, ((w, w) for w in words))
        self.sent = dict.fromkeys(words, 1)
        self.reader.wait_for(len(words), 900)

    def up_to_scale(self, scale: Callable[[], None]) -> float:
        """Prefill, steady input, then ``scale()``; when it was asked (Unix s)."""
        self.prefill()
        time.sleep(self.args.settle)
        self.start_steady()
        time.sleep(self.args.settle)
        scaled = time.time()
        scale()
        return scaled

    def start_steady(self) -> None:
        n = self.args.words

        def line(i: int) -> tuple[str, str, str]:
            word = f"w{(i * 7919) % n}"
            return word, word, word

        self.steady = SteadyInput(
            self.bootstrap, self.source, self.args.rate, line, partitioner="murmur2_random"
        )
        self.steady.start()
        self.started = time.time()

    def finish(self, scaled: float) -> Lateness:
        assert self.steady is not None
        for word, n in self.steady.stop().items():
            self.sent[word] = self.sent.get(word, 0) + n
        self.stopped = time.time()
        self.reader.wait_for(sum(self.sent.values()), 600)
        time.sleep(1)
        outputs = self.outputs = self.reader.stop()
        exact_counts([(o.partition, 0, o.key, o.value) for o in outputs], self.sent)
        times = input_times(read_all(self.bootstrap, self.source, PARTITIONS))
        return lateness(outputs, times, self.started, scaled, self.stopped)


def run_kstreams(stack: Any, args: argparse.Namespace, before: int, after: int, work: Path) -> Row:
    bootstrap = stack.kafka.bootstrap_servers
    tag = uuid.uuid4().hex[:6]
    application, source, output = f"ks-wc-{tag}", f"text-{tag}", f"counts-{tag}"
    create_topics(bootstrap, {source: PARTITIONS, output: PARTITIONS})
    java = {"bootstrap": bootstrap, "application": application, "input": source, "output": output}
    java["probing-ms"] = str(args.probing_ms)
    app = KafkaStreamsApp(java, partitions=PARTITIONS, work=work)
    load = Workload(bootstrap, source, output, args)
    try:
        app.scale(before)
        wait_for(f"{before} instances settled", lambda: app.settled(before), 180, app.failures)
        scaled = load.up_to_scale(lambda: app.scale(after))
        at: list[float] = []
        timeout = args.probing_ms / 1000 * 8 + 180

        def balanced() -> bool:
            found = app.balanced(after, scaled)
            at.extend([found] if found is not None else [])
            return found is not None

        wait_for(f"{after} instances balanced", balanced, timeout, app.failures)
        time.sleep(args.settle)
        late = load.finish(scaled)
        restored = app.restored(scaled)
        moves = counting_moves(reports_timeline({i.name: i.tasks for i in app.instances}, scaled))
    finally:
        app.stop()
    mean = record_bytes(read_all(bootstrap, f"{application}-counts-store-changelog", PARTITIONS))
    nbytes = sum(n * mean.get(p, 0.0) for p, n in restored.items())
    return Row(
        "Kafka Streams",
        before,
        after,
        at[0] - scaled,
        app.peak_stateful(scaled),
        sum(restored.values()),
        int(nbytes),
        late,
        app.final_stateful(),
        scaled,
        moves,
    )


def run_segue(
    stack: Any, api: Any, args: argparse.Namespace, *, before: int, after: int, work: Path
) -> Row:
    bootstrap = stack.kafka.bootstrap_servers
    namespace = f"ks-segue-{before}-{after}-{uuid.uuid4().hex[:4]}"
    new_namespace(api, namespace)
    app = SegueApp(
        api,
        bootstrap=bootstrap,
        namespace=namespace,
        replicas=before,
        kubeconfig=stack.kube.kubeconfig,
        log=work,
    )
    load = Workload(bootstrap, app.source, app.output, args)
    try:
        app.start()
        wait_for(f"{before} pods balanced", lambda: app.balanced(before), 300, app.diagnose)
        scaled = load.up_to_scale(lambda: app.scale(after))
        took = wait_for(f"{after} pods balanced", lambda: app.balanced(after), 600, app.diagnose)
        time.sleep(args.settle)
        late = load.finish(scaled)
        records, nbytes = app.watch.restored()
        final = app.final_stateful()
        peak = app.watch.peak
        logs = app.pod_logs()
    finally:
        app.stop()
    for pod, text in logs.items():
        (work / f"{pod}.log").write_text(text)
    generations = app.generations.since(scaled)
    moves = counting_moves((t, owners) for t, _, owners in generations)
    made_by = {t: g for t, g, _ in generations}
    published = parse_operator(
        "".join(p.read_text(errors="replace") for p in sorted(work.glob("operator-*.log")))
    )
    pods = {pod: parse_worker(text) for pod, text in logs.items()}
    visible: dict[int, list[float]] = {}
    for out in sorted(load.outputs, key=lambda o: o.visible):
        visible.setdefault(out.partition, []).append(out.visible)
    traced = [
        t
        for m in moves.moves
        if (
            t := trace(
                m,
                made_by[m.time],
                published=published,
                pods=pods,
                visible=visible.get(int(m.task.split("_")[1]), []),
                usage=app.usage,
            )
        )
        is not None
    ]
    text = trace_table(traced)
    (work / "trace.md").write_text(text + "\n")
    return Row(
        "Segue", before, after, took, peak, records, nbytes, late, final, scaled, moves, text
    )


def main(args: argparse.Namespace, say: Callable[[str], None]) -> list[Row]:
    rows: list[Row] = []
    runs = [(side, b, a) for b, a in args.scales for side in args.sides for _ in range(args.runs)]
    with (
        operator_stack() as (stack, api),
        tempfile.TemporaryDirectory(prefix="segue-kstreams-") as tmp,
        Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()) as bar,
    ):
        task = bar.add_task("runs", total=len(runs))
        for side, before, after in runs:
            bar.update(task, description=f"{side} {before}->{after}")
            work = (args.workdir or Path(tmp)) / f"{side}-{before}-{after}-{len(rows) + 1}"
            work.mkdir(parents=True)
            if side == "segue":
                row = run_segue(stack, api, args, before=before, after=after, work=work)
            else:
                row = run_kstreams(stack, args, before, after, work)
            rows.append(row)
            say(row.describe())
            if row.trace:
                say(f"where the handovers' pauses went (s from each pause's start):\n{row.trace}")
            bar.advance(task)
    return rows


def _scale(text: str) -> tuple[int, int]:
    before, _, after = text.partition(":")
    if not (before.isdigit() and after.isdigit() and 0 < int(before) < int(after)):
        raise argparse.ArgumentTypeError(f"scale {text!r}: expected FROM:TO with 0 < FROM < TO")
    return int(before), int(after)


def cli() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--words", type=int, default=240_000, help="distinct words prefilled")
    parser.add_argument("--rate", type=float, default=300.0, help="lines/s while scaling")
    parser.add_argument(
        "--probing-ms",
        type=int,
        default=60_000,
        help="Kafka Streams' probing.rebalance.interval.ms (its default 600,000; 60,000 is "
        "the least it accepts)",
    )
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between phases")
    parser.add_argument(
        "--scales", type=_scale, nargs="+", default=list(SCALES), help="e.g. 2:3 3:6 (default)"
    )
    parser.add_argument(
        "--sides", nargs="+", choices=("segue", "kstreams"), default=["segue", "kstreams"]
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the instances' and the operator's logs here"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs of each side and scale")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()
    rows = main(args, print)
    text = table(rows, args)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    cli()
