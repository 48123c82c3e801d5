"""Side by side with Kafka Streams: seed 003's WordCount scaled 2->3 and 3->6 by Kafka
Streams (its default ``HighAvailabilityTaskAssignor``, static membership, one standby), by
Segue, and by Kafka Streams + Segue (the same Java app under the operator, placed by Segue's
KIP-924 plugin: ``plugin_side``), on one broker with identical input and state
(docs/benchmarks.md, "Side by side with Kafka Streams").

Every run gets fresh topics (6 partitions, as in seed 003): the app starts on the smaller
count, then ``--words`` distinct words are written (one word a line, keyed by the word) and
counted, so each counting task holds the same changelog; then steady input at ``--rate``
lines/s, the scale request, and the wait until balanced. Per run: time until balanced, the
most stateful actives one instance held, changelog records and bytes restored, the longest
pause of a task's output and the records processed late (``measure``). Counts are checked
exact. Build the Java side first: ``bash bench/kstreams/run.sh`` does both (the plugin's
jar, ``kstreams/``, is built by the driver when the plugin side runs).

    .venv/bin/python -m bench.kstreams.run [--words 240000] [--rate 300] [--probing-ms 60000]
        [--sides kstreams,segue,plugin] [--scales 2:3 3:6] [--runs 1] [--workdir DIR] [--jfr]
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
from tests.operator.e2e import wait_for
from tests.operator.test_e2e_scaling import PARTITIONS
from tests.worker.harness import create_topics

from .kstreams_side import KafkaStreamsApp
from .measure import read_all, record_bytes
from .moves import counting_moves, reports_timeline
from .plugin_side import run_plugin
from .report import Row, table
from .segue_side import SegueApp
from .trace import parse_operator, parse_worker, trace
from .trace import table as trace_table
from .workload import Workload

SCALES = ((2, 3), (3, 6))
SIDES = ("segue", "kstreams", "plugin")


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
        rebalances = sum(1 for i in app.instances for t, _ in i.verdicts if t >= scaled)
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
        rebalances=rebalances,
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
            elif side == "plugin":
                row = run_plugin(stack, api, args, before=before, after=after, work=work)
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


def _sides(text: str) -> list[str]:
    sides = [s for s in text.split(",") if s]
    if not sides or not set(sides) <= set(SIDES):
        raise argparse.ArgumentTypeError(f"sides {text!r}: expected some of {', '.join(SIDES)}")
    return sides


def build_parser() -> argparse.ArgumentParser:
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
        "--sides",
        type=_sides,
        nargs="+",
        default=[list(SIDES)],
        help="of segue, kstreams, plugin (Kafka Streams + Segue); comma- or space-separated",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the instances' and the operator's logs here"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs of each side and scale")
    parser.add_argument(
        "--learner-promotion",
        choices=("eager", "batch"),
        default="eager",
        help="Kafka Streams + Segue's spec.scaling.learnerPromotion: eager hands each learner "
        "over once caught up, batch a member's learners together (docs/kafka-streams.md)",
    )
    parser.add_argument(
        "--jfr",
        action="store_true",
        help="Kafka Streams + Segue's instances record with JFR, into each run's jfr/ "
        "(under --workdir)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    return parser


def cli() -> None:
    parser = build_parser()
    args = parser.parse_args()
    if args.jfr and args.workdir is None:  # the recordings would go with the temporary dir
        parser.error("--jfr keeps its recordings under --workdir: give one")
    args.sides = list(dict.fromkeys(s for group in args.sides for s in group))
    rows = main(args, print)
    text = table(rows, args)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    cli()
