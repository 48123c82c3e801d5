"""The optional compiled build: ``SEGUE_MYPYC=1 pip install .`` compiles the pure decision
core and the what-if simulator with mypyc (docs/dependencies.md, "mypyc").

Everything else about the distribution is in ``pyproject.toml``; without the variable
this is a plain ``setup()`` and the package is pure Python (the editable dev install, the
image). Which modules are compiled is ``tools/compiled.py``'s to say. mypyc names a
module by its path, so the mapped folders (``assignor/`` is ``segue.assignor``, ...) are
first copied under ``build/mypyc/src/segue/``; its mypy run reads ``[tool.mypy]`` as
``make typecheck`` does, and a module it compiles keeps its ``.py`` beside the
extension, which Python imports first.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
STAGE = Path("build") / "mypyc"


def _stage() -> list[str]:
    """Copy every mapped module under ``build/mypyc/src``; those to compile."""
    sys.path.insert(0, str(ROOT / "tools"))
    from compiled import COMPILED, INTERPRETED  # what is compiled: one home, with the key's
    from typecheck import modules  # the one walk of the package-dir mapping

    src = STAGE / "src"
    shutil.rmtree(src, ignore_errors=True)
    for path, module in modules((ROOT / "pyproject.toml",)).items():
        *package, name = module.split(".") + (["__init__"] if path.name == "__init__.py" else [])
        target = src.joinpath(*package, f"{name}.py")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    chosen = {p for pattern in COMPILED for p in src.glob(pattern)}
    return sorted(str(p) for p in chosen if p.relative_to(src).as_posix() not in INTERPRETED)


if os.environ.get("SEGUE_MYPYC") != "1":
    setup()
else:
    try:
        from mypyc.build import mypycify
    except ImportError as missing:
        raise SystemExit(
            "SEGUE_MYPYC=1 compiles with mypyc, which type-checks against the runtime "
            "dependencies: build in an environment that has them and the dev extra, with "
            "--no-build-isolation (make compiled)"
        ) from missing
    os.environ["MYPYPATH"] = str(STAGE / "src")
    flags = ["--explicit-package-bases", "--no-warn-unused-configs"]
    flags += ["--cache-dir", str(STAGE / "cache")]
    modules = mypycify([*flags, *_stage()], opt_level="3", target_dir=str(STAGE / "c"))
    # setuptools packs whatever its build folder holds: this build's own, started empty,
    # so no extension reaches a pure wheel built later in build/ and no stale one this.
    shutil.rmtree(STAGE / "setuptools", ignore_errors=True)
    setup(ext_modules=modules, options={"build": {"build_base": str(STAGE / "setuptools")}})
