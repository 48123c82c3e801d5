"""``segue stack``: run the embedded local stack until Ctrl-C (``make demo``)."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

HELP = "run the embedded local stack (Kafka, Kubernetes, pod runner)"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="stack_command", metavar="ACTION", required=True)
    up = sub.add_parser("up", help="start Kafka, the Kubernetes control plane and the pod runner")
    up.add_argument("--workdir", type=Path, help="keep the stack's data here (default: a temp dir)")
    up.add_argument("--no-kafka", action="store_true", help="do not start Kafka")
    up.add_argument("--no-pods", action="store_true", help="do not start the pod runner")


def run(args: argparse.Namespace) -> int:
    from segue.stack.localstack import LocalStack
    from segue.stack.process import StackError

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        stack = LocalStack(args.workdir, with_kafka=not args.no_kafka, with_pods=not args.no_pods)
        print("starting the local stack ...", flush=True)
        stack.start()
    except StackError as exc:
        print(f"segue stack: {exc}", flush=True)
        return 1
    try:
        print(stack.describe(), flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        stop.wait()
    finally:
        print("stopping ...", flush=True)
        stack.stop()
        print("stopped.", flush=True)
    return 0
