"""The ``segue`` command: one entry point whose subcommands come from each layer.

Subcommands are entry points of the group ``segue.commands`` (``pyproject.toml``, read by
:mod:`.commands`): a module with ``HELP``, ``configure(parser)`` and ``run(args) -> int``
that keeps heavy imports inside ``run``, so ``segue --help`` stays fast and a layer's
dependencies load only when that layer is used; a run imports only the module of the
subcommand it runs. The dev-only distribution in ``stack/`` adds ``segue stack`` this
way, so the product's wheel never names it. tests/test_cli_startup.py holds the start-up
time and what ``segue --help`` imports.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from segue.commands import installed


def build_parser(prog: str = "segue", command: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand's parser; with ``command`` (the one :func:`main` runs) only that
    subcommand's module is imported and configured, the others are only named."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Scale stateful Kafka stream applications on Kubernetes without downtime.",
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = installed()
    for name in sorted(modules):
        if command in modules and name != command:
            commands.add_parser(name)
            continue
        module = importlib.import_module(modules[name])
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


class _Version(argparse.Action):
    """``--version``, reading the installed version only when asked: it is the
    distribution's metadata, slow to load, which no other run of ``segue`` needs."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import version

        print(f"segue {version('segue')}")
        parser.exit()


def main(argv: Sequence[str] | None = None, prog: str = "segue") -> int:
    # Segue uses no pydantic plugin; looking for them reads every installed package's
    # entry points, which cost a CLI run more than its own imports. A user's own setting wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog, words[0] if words else None)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help()
        return 2
    result: int = args._run(args)
    return result


def kubectl_main() -> int:
    """``kubectl-segue``: kubectl runs it for ``kubectl segue ...`` with the words after
    ``segue``, so ``kubectl segue status APP`` is ``segue status APP``."""
    return main(prog="kubectl segue")
