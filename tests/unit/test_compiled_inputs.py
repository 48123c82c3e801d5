"""tools/compiled.py: the compiled build is keyed on what mypyc reads, and every other
module is laid over it as it is now (``make compiled``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "compiled.py"


def tool(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_the_key_covers_the_compiled_modules_and_what_they_import_only() -> None:
    inputs = set(tool("inputs").split())
    # compiled, and kept interpreted among them (still read by mypyc)
    assert {"assignor/solve.py", "operator/scaling/core.py", "assignor/model.py"} <= inputs
    assert "protocol/document.py" in inputs  # imported by the scaling core
    assert not [p for p in inputs if p.startswith(("worker/", "src/"))]
    assert "operator/reconcile.py" not in inputs  # the operator's I/O


def test_every_other_module_is_laid_over_the_build_as_it_is(tmp_path: Path) -> None:
    stale = tmp_path / "segue" / "worker" / "trace.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("# an older build's\n")
    tool("overlay", str(tmp_path))
    assert stale.read_text() == (ROOT / "worker" / "trace.py").read_text()
    assert (tmp_path / "segue" / "cli.py").read_text() == (ROOT / "src/segue/cli.py").read_text()
    assert not (tmp_path / "segue" / "assignor").exists()  # the build's own, untouched


def test_a_module_removed_from_the_source_goes_from_the_build_too(tmp_path: Path) -> None:
    gone = tmp_path / "segue" / "worker" / "retired.py"
    kept = tmp_path / "segue" / "assignor" / "solve.py"  # compiled: its source is there
    for path in (gone, kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# the build's\n")
    tool("overlay", str(tmp_path))
    assert not gone.exists()
    assert kept.read_text() == "# the build's\n"


def test_the_key_reads_what_the_build_reads_of_pyproject_and_not_the_linters(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(TOOL.parent))
    try:
        from compiled import build_settings
    finally:
        sys.path.remove(str(TOOL.parent))
    text = (ROOT / "pyproject.toml").read_text()
    assert "\n[tool.ruff]\nline-length = 100\n" in text
    assert "\n[tool.mypy]\n" in text

    def key(changed: str) -> str:
        (tmp_path / "pyproject.toml").write_text(changed)
        return build_settings(tmp_path / "pyproject.toml")

    assert tool("key").strip() == key(text)
    linted = text.replace("\n[tool.ruff]\nline-length = 100\n", "\n[tool.ruff]\nline-length = 99\n")
    assert key(linted) == key(text)  # a linter's setting: the build is restored
    typed = text.replace("\n[tool.mypy]\n", "\n[tool.mypy]\nwarn_unreachable = false\n")
    assert key(typed) != key(text)  # mypy's: built again
