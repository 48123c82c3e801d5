"""The ``segue`` command: one entry point whose subcommands come from each layer.

Subcommands are entry points of the group ``segue.commands`` (``pyproject.toml``): a
module with ``HELP``, ``configure(parser)`` and ``run(args) -> int`` that keeps heavy imports
inside ``run``, so ``segue --help`` stays fast and a layer's dependencies load only when
that layer is used. The dev-only distribution in ``stack/`` adds ``segue stack`` this
way, so the product's wheel never names it.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from importlib.metadata import entry_points, version

GROUP = "segue.commands"


def build_parser(prog: str = "segue") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Scale stateful Kafka stream applications on Kubernetes without downtime.",
    )
    parser.add_argument("--version", action="version", version=f"segue {version('segue')}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        module = importlib.import_module(point.value)
        sub = commands.add_parser(point.name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "segue") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    result: int = args._run(args)
    return result


def kubectl_main() -> int:
    """``kubectl-segue``: kubectl runs it for ``kubectl segue ...`` with the words after
    ``segue``, so ``kubectl segue status APP`` is ``segue status APP``."""
    return main(prog="kubectl segue")
