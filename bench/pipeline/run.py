"""The what-if pipeline at fleet scale: Spark on ``local[2]`` against one process.

Both sides run the same code on the same rows: ``segue.pipeline.evaluate.evaluate_all``
in a plain loop, and the Spark job of ``segue simulate`` (``segue.pipeline.spark.job``),
which maps ``evaluate_unit`` over its partitions. The single process may replay only
the first ``--single`` scenarios (a rate is a rate; the fleet is a seeded prefix); the
results it has must equal Spark's for those scenarios, metric for metric, or the run
fails. Reported: scenarios/s each way, the speedup, Spark's fixed cost (the JVM), and
which build each side ran: the compiled one (``make compiled``; the Spark workers inherit
``PYTHONPATH``) or the interpreted editable install.

    PYTHONPATH=build/compiled .venv/bin/python -m bench.pipeline.run --scenarios 10000 --single 2000

Results and the command: docs/benchmarks.md, "Pipeline".
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from segue.pipeline.catalog import parse
from segue.pipeline.evaluate import build, evaluate_all
from segue.pipeline.fleet import fleet
from segue.pipeline.report import write_report
from segue.pipeline.rows import Result, ScenarioRow
from segue.pipeline.spark import job, session

DEFAULT_POLICIES = "segue(),eager,kip441,keda"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenarios", type=int, default=10_000, help="synthetic scenarios (Spark)")
    p.add_argument("--single", type=int, default=None, help="of them, replayed in one process")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--policies", default=DEFAULT_POLICIES, help="as segue simulate --policies")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    p.add_argument("--report", type=Path, default=None, help="write Spark's report.html here")
    args = p.parse_args()
    single = args.scenarios if args.single is None else min(args.single, args.scenarios)
    specs = parse(args.policies)
    source = f"synthetic(n={args.scenarios},seed={args.seed})"
    rows = [
        ScenarioRow(source, i + 1, s.model_dump_json())
        for i, s in enumerate(fleet(args.scenarios, args.seed))
    ]

    print(f"build: {build()}")
    started = time.monotonic()
    alone = [asdict(r) for r in evaluate_all(rows[:single], specs) if isinstance(r, Result)]
    one_process = time.monotonic() - started
    print(f"one process: {single} scenarios x {len(specs)} policies in {one_process:.1f} s")

    started = time.monotonic()
    spark = session.build(args.master, (), {})
    jvm = time.monotonic() - started
    workers = spark.sparkContext.parallelize([0], 1).map(lambda _: build()).collect()[0]
    print(f"build of the Spark workers: {workers}")
    with tempfile.TemporaryDirectory() as out:
        started = time.monotonic()
        rdd = spark.sparkContext.parallelize(rows, max(1, min(len(rows), 64)))
        output = job.run(spark, rdd, specs, Path(out))
        on_spark = time.monotonic() - started
    spark.stop()
    if args.report:
        write_report(args.report, output.results, output.summary, output.errors)
    print(f"spark {args.master}: {args.scenarios} scenarios in {on_spark:.1f} s (+{jvm:.1f} s JVM)")

    mismatched = _compare(alone, output.results, single)
    if mismatched:
        raise SystemExit(f"Spark and one process disagree on {mismatched} result rows")
    numbers: dict[str, Any] = {
        "scenarios": args.scenarios,
        "single": single,
        "policies": [s.name for s in specs],
        "master": args.master,
        "build": build(),
        "spark_build": workers,
        "one_process_s": round(one_process, 2),
        "one_process_scenarios_per_s": round(single / one_process, 3),
        "spark_s": round(on_spark, 2),
        "spark_jvm_start_s": round(jvm, 2),
        "spark_scenarios_per_s": round(args.scenarios / on_spark, 3),
        "speedup": round((args.scenarios / on_spark) / (single / one_process), 2),
        "errors": len(output.errors),
    }
    print(_table(numbers))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


def _compare(alone: list[dict[str, Any]], spark: list[dict[str, Any]], single: int) -> int:
    """Result rows of the first ``single`` scenarios that differ between the two runs."""
    mine = {(r["scenario"], r["policy"]): r for r in alone}
    theirs = {(r["scenario"], r["policy"]): r for r in spark if r["row"] <= single}
    if mine.keys() != theirs.keys():
        return len(mine.keys() ^ theirs.keys())
    return sum(1 for k, r in mine.items() if r != theirs[k])


def _table(n: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| run | scenarios | wall (s) | scenarios/s |",
            "|---|---|---|---|",
            f"| one process, {n['build']} | {n['single']:,} | {n['one_process_s']} | "
            f"{n['one_process_scenarios_per_s']} |",
            f"| Spark {n['master']}, {n['spark_build']} | {n['scenarios']:,} | {n['spark_s']} "
            f"(+{n['spark_jvm_start_s']} JVM) | {n['spark_scenarios_per_s']} |",
            f"| speedup | | | {n['speedup']}x |",
        ]
    )


if __name__ == "__main__":
    main()
