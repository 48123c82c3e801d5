"""Run mypy over Segue's packages as they are mapped, each file under its real path.

``pyproject.toml`` maps top-level folders onto one import root (``assignor/`` is
``segue.assignor``, ...) and the dev-only ``stack/pyproject.toml`` adds ``segue.stack``.
Python follows that mapping through setuptools' editable finder, an import hook, which
mypy cannot follow (python/mypy#13392). So this reads the same ``package-dir`` tables,
names every file by its module, and hands mypy that list: one path per file, the
settings of ``[tool.mypy]``, and errors reported at the path you edit.

Usage: ``python tools/typecheck.py`` (``make typecheck``); extra arguments go to mypy.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = (ROOT / "pyproject.toml", ROOT / "stack" / "pyproject.toml")


def mapping(projects: tuple[Path, ...] = PROJECTS) -> dict[str, Path]:
    """Package name -> its folder, from each project's ``[tool.setuptools.package-dir]``."""
    out: dict[str, Path] = {}
    for project in projects:
        table = tomllib.loads(project.read_text())["tool"]["setuptools"]["package-dir"]
        out.update({name: (project.parent / folder).resolve() for name, folder in table.items()})
    return out


def modules(projects: tuple[Path, ...] = PROJECTS) -> dict[Path, str]:
    """Every Python file under the mapping -> its module name (the deepest mapping wins);
    also the walk ``setup.py`` stages the compiled build with."""
    found: dict[Path, str] = {}
    table = mapping(projects)
    for package, folder in sorted(table.items(), key=lambda item: item[0].count(".")):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if any(not part.isidentifier() for part in parts):
                continue  # not importable (e.g. a build folder)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[path] = ".".join((package, *parts))
    return found


def main(argv: list[str]) -> int:
    files = modules()
    sources, options = process_options(
        [*argv, *(str(p) for p in files)], fscache=None, program="typecheck"
    )
    for source in sources:
        source.module = files[Path(source.path or "").resolve()]
    try:
        result = build.build(sources, options)
        messages = result.errors
    except CompileError as exc:
        messages = exc.messages
    for line in messages:
        print(line)
    errors = sum(" error: " in m for m in messages)
    if errors:
        print(f"Found {errors} error(s) in {len(sources)} source files", file=sys.stderr)
        return 1
    print(f"Success: no issues found in {len(sources)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
