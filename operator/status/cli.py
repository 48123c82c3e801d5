"""``segue status APP``: one screen for a StreamApp, from any machine that reaches the
API server (also ``kubectl segue status APP``: the wheel's ``kubectl-segue`` script).

Imports of the Kubernetes client wait for :func:`run`, so ``segue --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

HELP = "show a StreamApp at a glance: pods, tasks, learners, what the operator waits for"

DESCRIPTION = """\
Show one StreamApp: its phase and conditions; per pod its member role, readiness and
active/standby/learning tasks; each learner's lag, restored records, rate and ETA;
what the operator waits for; handovers in flight and recent; the latest events.
Everything is read through the API server (the StreamApp, its pods, its events, and
each pod's /metrics through the API server's pod proxy), so only a kubeconfig is needed.
A rate needs two reads: a one-shot read samples twice, --sample seconds apart (1 by
default; 0: one read, no rates), --watch between refreshes. docs/status.md explains
each part of the screen and the JSON document (-o json)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("app", metavar="APP", help="the StreamApp's name")
    parser.add_argument(
        "-n", "--namespace", help="its namespace (default: the context's, else 'default')"
    )
    parser.add_argument(
        "--kubeconfig", help="the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context (default: the current one)")
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text",
        help="text (default) or json: a stable document for scripts (one per line with --watch)",
    )  # fmt: skip
    parser.add_argument(
        "-w", "--watch", action="store_true", help="refresh every --interval seconds until Ctrl-C"
    )
    parser.add_argument(
        "--interval", type=float, default=2.0, metavar="SECONDS",
        help="seconds between refreshes with --watch (default 2)",
    )  # fmt: skip
    parser.add_argument(
        "--sample", type=float, default=1.0, metavar="SECONDS",
        help="one-shot only: seconds between the two reads a rate needs (default 1; 0: one read)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from .build import screen
    from .fetch import NotFound, connect, read
    from .interrupts import INTERRUPTED, watch, write_stdout
    from .progress import Rates
    from .render import CLEAR, render

    api, namespace = connect(args.kubeconfig, args.context)
    namespace = args.namespace or namespace
    rates = Rates()

    def once() -> str:
        shown = screen(read(api, namespace, args.app), rates, time.time())
        if args.output == "json":
            return json.dumps(shown.to_json(), sort_keys=True) + "\n"
        return render(shown)

    try:
        if not args.watch:
            if args.sample > 0:
                once()
                time.sleep(args.sample)
            sys.stdout.write(once())
            return 0
        if args.output != "json":
            return watch(lambda: CLEAR + once(), args.interval, write_stdout)
        return watch(once, args.interval, write_stdout)
    except NotFound as exc:
        print(f"segue status: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED
