"""The repository's shape: one import root, no shadowed stdlib, one CLI."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("flags", [[], ["-S"], ["-I"]], ids=["plain", "no-site", "isolated"])
def test_import_operator_from_repo_root_is_the_standard_library(flags: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, *flags, "-c", "import operator; print(operator.__file__)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(out).parent == Path(sysconfig.get_paths()["stdlib"]), out


def test_operator_folder_is_not_a_regular_package() -> None:
    # A regular package here would win over the stdlib module from the repo root.
    assert not (ROOT / "operator" / "__init__.py").exists()


def test_subpackages_import_under_one_root() -> None:
    import segue.assignor
    import segue.pipeline
    import segue.stack
    import segue.worker

    for module in (segue.assignor, segue.pipeline, segue.stack, segue.worker):
        file = Path(module.__file__ or "")
        assert file.resolve().parent.parent == ROOT, file


def test_segue_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "segue", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "usage: segue" in out
    assert "stack" in out


def test_segue_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "segue"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("segue ")
