"""``segue simulate``: replay a fleet of scenarios under Segue and the baselines, on Spark.

Reads scenarios (a synthetic fleet, files, or a Kafka topic), replays each under every
policy on Spark (``local[*]`` unless ``--master`` or spark-submit says otherwise), and
writes ``OUT/results/``, ``OUT/errors/`` and ``OUT/summary/`` (Parquet) and
``OUT/report.html``. Everything the user can get wrong (a missing path, a bad master, an
unknown policy, pyspark not installed) is checked before Spark starts and exits 2 with
one line; a bad scenario row never ends the run (it is listed, with its row and field).
Heavy imports stay inside :func:`run` so ``segue --help`` stays fast and works in the
image, which has no pyspark. docs/pipeline.md, "Spark".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "replay scenarios under Segue and the baselines on Spark; write results and a report"
DEFAULT_POLICIES = "segue,baselines"
MASTER_HELP = "Spark master (default local[*]; under spark-submit, spark-submit's)"


def configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--synthetic", type=_positive, metavar="N", help="a synthetic fleet of N")
    source.add_argument(
        "--scenarios",
        metavar="PATH",
        help="JSON-lines or Parquet file(s) of scenarios or recorded history rows "
        "(a file or a folder), or kafka://HOST:PORT/TOPIC",
    )
    parser.add_argument("--seed", type=int, default=0, help="the synthetic fleet's seed")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    parser.add_argument(
        "--policies",
        default=DEFAULT_POLICIES,
        help="comma list: segue (the default sweep), segue(warmups=N,standbys=N,lag=N,"
        "promotion=eager|batch), eager, kip441, keda, baselines (default: %(default)s)",
    )
    parser.add_argument("--master", default=None, help=MASTER_HELP)
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, repeatable (e.g. spark.kubernetes.container.image=IMAGE)",
    )
    parser.add_argument(
        "--packages",
        default="",
        help="Maven coordinates Spark resolves itself (e.g. the Kafka connector when "
        "SEGUE_SPARK_JARS and make's cache have none)",
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def fail(message: str) -> int:
    print(f"segue simulate: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from segue.pipeline import catalog

    try:
        policies = catalog.parse(args.policies)
    except ValueError as exc:
        return fail(f"--policies: {exc}")
    settings = dict(c.partition("=")[::2] for c in args.conf)
    if any(not k.startswith("spark.") or not v for k, v in settings.items()):
        return fail(f"--conf: expected spark.KEY=VALUE, got {' '.join(args.conf)}")
    if args.out.exists() and not args.out.is_dir():
        return fail(f"--out {args.out}: not a directory")
    try:
        from segue.pipeline.spark import main, sources
    except ImportError as exc:
        return fail(f"needs the spark extra (pip install 'segue[spark]'): {exc}")
    if args.master is not None and not main.MASTER.match(args.master):
        return fail(
            f"--master {args.master!r}: not a Spark master URL (local[*], spark://, k8s://)"
        )
    try:
        source = main.plan(args.synthetic, args.seed, args.scenarios)
    except sources.SourceError as exc:
        return fail(str(exc))
    packages = [p for p in args.packages.split(",") if p]
    return main.simulate(
        source, policies, args.out, master=args.master, packages=packages, settings=settings
    )
