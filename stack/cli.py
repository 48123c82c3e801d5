"""``segue stack``: run the embedded local stack until Ctrl-C (``up``), or the live
scaling show on it (``demo``, ``make demo``; segue.stack.demo, docs/demo.md)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from pathlib import Path
from typing import Any

HELP = "run the embedded local stack (Kafka, Kubernetes, pod runner)"
KAFKA_PORT = 9092  # Kafka's usual port: what a newcomer's clients and the example name


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="stack_command", metavar="ACTION", required=True)
    up = sub.add_parser("up", help="start Kafka, the Kubernetes control plane and the pod runner")
    up.add_argument("--workdir", type=Path, help="keep the stack's data here (default: a temp dir)")
    up.add_argument("--no-kafka", action="store_true", help="do not start Kafka")
    up.add_argument("--no-pods", action="store_true", help="do not start the pod runner")
    up.add_argument(
        "--kafka-port",
        type=int,
        default=KAFKA_PORT,
        help="Kafka's port on 127.0.0.1 (default %(default)s, the one examples/wordcount.yaml "
        "names)",
    )
    up.add_argument(
        "--brokers",
        type=_brokers,
        default=1,
        help="Kafka brokers (default %(default)s): 3 is a replicated cluster (replication "
        "factor 3, min.insync.replicas 2), the first broker on --kafka-port",
    )
    up.add_argument(
        "--kubeconfig",
        type=Path,
        help="add the stack as kubectl's current context (segue-local) to this file until "
        "it stops (default: the first of $KUBECONFIG, else ~/.kube/config)",
    )
    up.add_argument(
        "--no-kubeconfig",
        action="store_true",
        help="leave kubectl's config alone (the stack's own is printed)",
    )
    demo = sub.add_parser(
        "demo",
        help="the live scaling show: WordCount scaled, killed, grown and burst (docs/demo.md)",
        description="Start the local stack, helm-install Segue, run WordCount on prefilled "
        "state under steady input and play a script of steps on it with a live view; "
        "then write an HTML report and print one JSON line. Ctrl-C stops everything.",
    )
    demo.add_argument(
        "--quick", action="store_true", help="a short script on a small prefill (~2 min)"
    )
    demo.add_argument(
        "--report", type=Path, help="where report.html and the PNGs go (default: ./demo-report)"
    )
    demo.add_argument("--workdir", type=Path, help="keep the stack's data here (default: temp)")
    demo.add_argument(
        "--steps", help="comma-separated steps: scale=N, kill, partitions=F (grow the input "
        "F times), burst=LINES (with an HPA); default 2->6->3, kill, partitions=2, burst"
    )  # fmt: skip
    demo.add_argument("--prefill", type=int, help="lines written before the app starts")
    demo.add_argument("--rate", type=float, help="steady input, lines/s (default 200)")
    demo.add_argument("--partitions", type=int, help="input topic partitions (default 6)")
    demo.add_argument("--settle-timeout", type=float, help="seconds a step may take to settle")
    demo.add_argument(
        "--brokers", type=_brokers, help="Kafka brokers: 1 (the default) or 3, replicated"
    )
    demo.add_argument(
        "--plain",
        action="store_true",
        help="print lines, no live view (the default off a terminal)",
    )


def _brokers(text: str) -> int:
    count = int(text) if text.isdigit() else 0
    if count not in {1, 3}:  # a quorum of 2 survives no loss; 1 or 3 is what to run
        raise argparse.ArgumentTypeError(f"--brokers {text!r}: 1 or 3")
    return count


def run(args: argparse.Namespace) -> int:
    if args.stack_command == "demo":
        return _demo(args)
    return _up(args)


def _up(args: argparse.Namespace) -> int:
    from segue.stack import kubecontext
    from segue.stack.localstack import LocalStack
    from segue.stack.process import StackError

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: its terminal closed
        signal.signal(sig, lambda *_: stop.set())
    merged: kubecontext.Merged | None = None
    try:
        stack = LocalStack(
            args.workdir,
            with_kafka=not args.no_kafka,
            with_pods=not args.no_pods,
            kafka_port=args.kafka_port,
            brokers=args.brokers,
        )
        print("starting the local stack ...", flush=True)
        stack.start()
    except StackError as exc:
        print(f"segue stack: {exc}", flush=True)
        return 1
    try:
        if not args.no_kubeconfig and stack.kube is not None:
            target = args.kubeconfig or kubecontext.kubectl_config()
            merged = kubecontext.merge(target, stack.kube.kubeconfig)
        print(stack.describe(merged.path if merged else None), flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        stop.wait()
    finally:
        _say("stopping ...")
        if merged is not None:
            kubecontext.unmerge(merged)
        stack.stop()
        _say("stopped.")
    return 0


def _say(text: str) -> None:
    """Print, unless the terminal is gone (SIGHUP): the stop goes on all the same."""
    with contextlib.suppress(OSError):
        print(text, flush=True)


def _demo(args: argparse.Namespace) -> int:
    from segue.stack.demo.show import run
    from segue.stack.demo.steps import StepError

    try:
        options = demo_options(args)
    except StepError as exc:
        print(f"segue stack demo: {exc}")
        return 2
    return run(options)


def demo_options(args: argparse.Namespace) -> Any:
    """The show's :class:`~segue.stack.demo.show.Options` from its flags (a flag left
    out keeps the default). Raises ``StepError`` naming a step that does not parse."""
    from segue.stack.demo.show import options_for
    from segue.stack.demo.steps import parse_script

    return options_for(
        args.quick,
        steps=parse_script(args.steps.split(",")) if args.steps else None,
        report=args.report,
        workdir=args.workdir,
        prefill=args.prefill,
        rate=args.rate,
        partitions=args.partitions,
        settle_timeout=args.settle_timeout,
        brokers=args.brokers,
        live=False if args.plain else None,
    )
