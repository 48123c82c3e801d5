"""The ``segue`` command: one entry point whose subcommands come from each layer.

A subcommand module exposes ``configure(parser)`` and ``run(args) -> int`` and
keeps heavy imports inside ``run``, so ``segue --help`` stays fast and a layer's
dependencies load only when that layer is used.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from segue import __version__

# name -> (module, one-line help). Later layers add their commands here.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "stack": ("segue.stack.cli", "run the embedded local stack (Kafka, Kubernetes, pod runner)"),
    "assign": ("segue.assignor.cli", "preview a placement decision: JSON in, JSON out"),
    "worker": ("segue.worker.cli", "run a stream application's worker process"),
    "operator": ("segue.operator.cli", "run the operator that scales StreamApps"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="segue",
        description="Scale stateful Kafka stream applications on Kubernetes without downtime.",
    )
    parser.add_argument("--version", action="version", version=f"segue {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=help_text, description=help_text)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    result: int = args._run(args)
    return result
