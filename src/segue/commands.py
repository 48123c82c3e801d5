"""The installed ``segue`` subcommands: the entry points of the group ``segue.commands``.

Read as ``importlib.metadata.entry_points(group=...)`` reads them (each ``*.dist-info`` or
``*.egg-info`` folder on ``sys.path``, in path order, the first distribution of a name
winning), but from the files themselves: importing ``importlib.metadata`` (email, zipfile,
...) costs more than the rest of ``segue --help``, which every ``segue`` process pays. A
distribution inside a zip file is not looked into. tests/test_cli_startup.py holds the two
readings equal.
"""

from __future__ import annotations

import os
import re
import sys

GROUP = "segue.commands"
_METADATA = (".dist-info", ".egg-info")


def installed() -> dict[str, str]:
    """Subcommand name -> the module that implements it, of every installed distribution."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # gone, a file or a zip
            continue
        for name in names:
            if not name.lower().endswith(_METADATA):
                continue
            distribution = _normalized(name.rpartition(".")[0].partition("-")[0])
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                with open(os.path.join(entry, name, "entry_points.txt"), encoding="utf-8") as file:
                    text = file.read()
            except OSError:  # a distribution without entry points
                continue
            for command, module in _group(text, GROUP):
                found.setdefault(command, module)
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _group(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of section ``[group]`` of an ``entry_points.txt``."""
    pairs: list[tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs
