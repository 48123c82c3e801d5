"""The repository's shape: one import root, one path per file, no shadowed stdlib, one CLI,
and a wheel that holds the product and nothing else."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("segue.assignor", "segue.operator", "segue.pipeline", "segue.protocol", "segue.worker")


def _setuptools(project: Path) -> dict[str, object]:
    table: dict[str, object] = tomllib.loads(project.read_text())["tool"]["setuptools"]
    return table


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


def test_no_source_file_has_a_second_path() -> None:
    links = [p for p in ROOT.rglob("*") if p.is_symlink() and ".venv" not in p.parts]
    assert links == [], links


def test_subpackages_import_from_their_own_folders() -> None:
    import segue.assignor
    import segue.stack
    import segue.worker

    for module, folder in ((segue.assignor, "assignor"), (segue.worker, "worker")):
        assert Path(module.__file__ or "") == ROOT / folder / "__init__.py"
    assert Path(segue.stack.__file__ or "") == ROOT / "stack" / "__init__.py"


@pytest.mark.parametrize("project", ["pyproject.toml", "stack/pyproject.toml"])
def test_every_package_folder_is_listed(project: str) -> None:
    """A folder of Python files left out of ``packages`` would silently miss the wheel."""
    table = _setuptools(ROOT / project)
    base = (ROOT / project).parent
    mapped = {name: (base / str(folder)).resolve() for name, folder in table["package-dir"].items()}  # type: ignore[attr-defined]
    found = set()
    for name, folder in mapped.items():
        for init in folder.rglob("*.py"):
            rel = init.parent.relative_to(folder).parts
            if any(not part.isidentifier() for part in rel):
                continue
            deeper = [
                n for n, f in mapped.items() if n != name and f in init.parents and f != folder
            ]
            if not deeper:
                found.add(".".join((name, *rel)))
    assert sorted(found) == sorted(table["packages"])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of only what pyproject.toml declares (pip builds in the source
    tree, and this must not leave a build/ folder in the checkout)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    folders = _setuptools(ROOT / "pyproject.toml")["package-dir"].values()  # type: ignore[attr-defined]
    for folder in folders:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
        check=True,
        timeout=600,
    )
    (built,) = out.glob("segue-*.whl")
    return built


def test_the_wheel_holds_the_product_and_nothing_else(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    modules = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith(".py")}
    assert not [m for m in modules if m.startswith("segue.stack")], modules
    assert {m.split(".")[1] for m in modules if m.count(".") >= 1} == {
        p.split(".")[1] for p in PRODUCT
    }
    assert {n.split("/")[0] for n in names if not n.startswith("segue-")} == {"segue"}
    assert "segue/cli.py" in names
    assert "segue/operator/__init__.py" not in names  # stays a namespace package


def test_segue_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "segue", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "usage: segue" in out
    for command in ("assign", "operator", "worker", "stack"):
        assert command in out


def test_segue_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "segue"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("segue ")
