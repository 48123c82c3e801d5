"""What the compiled build compiles, what it reads to do so, and the rest laid over it.

``setup.py`` compiles the modules :data:`COMPILED` names, less :data:`INTERPRETED`, with
mypyc. The compiled code depends on those modules and on every Segue module they import,
directly or not (:func:`closure`): mypyc type-checks them together. ``make compiled``
keys its cached build on that closure alone, then lays the rest of the package over the
build as it is now (:func:`overlay`): a change to the worker or to the operator's I/O no
longer rebuilds the decision core, which took about 100 s on every such change.

Usage: ``python tools/compiled.py inputs`` prints the closure's files;
``python tools/compiled.py key`` a digest of what the build reads of ``pyproject.toml``;
``python tools/compiled.py overlay DIR`` copies every other module into DIR's ``segue``.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import json
import shutil
import sys
import tomllib
from pathlib import Path

from typecheck import modules

ROOT = Path(__file__).resolve().parents[1]
PROJECT = (ROOT / "pyproject.toml",)  # the distribution's own mapping, not the stack's
# What the build reads of pyproject.toml: the distribution (the mypy pin among its extras),
# its build system, the package mapping, mypy's settings. Not the linters' or the tests'
# settings, whose every change rebuilt the decision core.
BUILD_TABLES = (("build-system",), ("project",), ("tool", "setuptools"), ("tool", "mypy"))
# Module globs, as mapped: the hot loops of `segue simulate` (bench/pipeline) and of each
# of the operator's looks. Pydantic models and the CLIs stay interpreted.
COMPILED = (
    "segue/assignor/*.py",
    "segue/operator/scaling/*.py",
    "segue/pipeline/physics.py",
    "segue/pipeline/state.py",
    "segue/pipeline/steady.py",
    "segue/pipeline/simulate.py",
    "segue/pipeline/policies/*.py",
)
# Within those, kept interpreted: pydantic models, what runs once per command, and the
# scaling core's model: `segue simulate` pickles its Policy to Spark's workers, and a
# compiled frozen dataclass cannot be unpickled.
INTERPRETED = {
    "segue/assignor/__init__.py",
    "segue/assignor/cli.py",
    "segue/assignor/errors.py",
    "segue/assignor/model.py",
    "segue/operator/scaling/__init__.py",
    "segue/operator/scaling/model.py",
    "segue/pipeline/policies/__init__.py",
}


def build_settings(pyproject: Path = PROJECT[0]) -> str:
    """A digest of :data:`BUILD_TABLES` as ``pyproject`` has them, for the build's key."""
    data = tomllib.loads(pyproject.read_text())
    picked = {}
    for path in BUILD_TABLES:
        table = data
        for part in path:
            table = table.get(part, {})
        picked[".".join(path)] = table
    digest = hashlib.sha256(json.dumps(picked, sort_keys=True).encode()).hexdigest()
    return f"pyproject.toml's build settings {digest[:16]}"


def relative(path: Path, module: str) -> str:
    """The module's file as the built package lays it out: ``segue/assignor/x.py``."""
    parts = module.split(".") + (["__init__"] if path.name == "__init__.py" else [])
    return "/".join(parts) + ".py"


def imported(path: Path, module: str, known: set[str]) -> set[str]:
    """The Segue modules ``module`` imports (each ``from a import b`` as ``a.b`` if that
    is a module, else ``a``), with the packages above them, which Python runs first."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            stem = ".".join(base) if node.level else ""
            source = ".".join(p for p in (stem, node.module or "") if p)
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    found = set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return found & known


def closure() -> list[Path]:
    """The compiled modules and every Segue module they import, directly or not."""
    files = modules(PROJECT)
    by_module = {module: path for path, module in files.items()}
    chosen = (
        m for p, m in files.items() if any(fnmatch.fnmatch(relative(p, m), g) for g in COMPILED)
    )
    todo = list(chosen)
    seen = set(todo)
    while todo:
        module = todo.pop()
        for other in imported(by_module[module], module, set(by_module)) - seen:
            seen.add(other)
            todo.append(other)
    return sorted(by_module[m] for m in seen)


def overlay(target: Path) -> int:
    """Copy every module outside :func:`closure` into ``target`` as it is now, and delete
    the modules there that no longer have a source (a compiled module's removal changes
    the closure, so the build itself goes); how many were copied."""
    inside = set(closure())
    laid = {path: relative(path, module) for path, module in modules(PROJECT).items()}
    for stale in {str(p.relative_to(target)) for p in (target / "segue").rglob("*.py")}:
        if stale not in laid.values():
            (target / stale).unlink()
    copied = 0
    for path, rel in laid.items():
        if path not in inside:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            copied += 1
    return copied


def main(argv: list[str]) -> int:
    if argv[:1] == ["inputs"]:
        print("\n".join(str(p.relative_to(ROOT)) for p in closure()))
    elif argv[:1] == ["key"]:
        print(build_settings())
    elif argv[:1] == ["overlay"] and len(argv) == 2:
        overlay(Path(argv[1]))
    else:
        print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
