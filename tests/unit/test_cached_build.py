"""tools/cached_build.py runs a step once per content of its inputs: a second run of the
same inputs restores the outputs without running it; a changed input, tool version or a
failed run means the step runs (the Makefile's kstreams and compiled steps use it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "cached_build.py"
# The step: count its runs in runs.txt (outside the outputs), write out/result.txt.
STEP = (
    "import pathlib; r = pathlib.Path('runs.txt'); "
    "r.write_text(str(int(r.read_text() or 0) + 1) if r.exists() else '1'); "
    "o = pathlib.Path('out'); o.mkdir(exist_ok=True); "
    "(o / 'result.txt').write_text(pathlib.Path('src/a.txt').read_text().upper())"
)


def build(work: Path, *extra: str, step: str = STEP) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEGUE_CACHE": str(work / "cache")}
    command = [sys.executable, str(TOOL), "step", "--inputs", "src", "--outputs", "out"]
    return subprocess.run(
        [*command, *extra, "--", sys.executable, "-c", step],
        cwd=work, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def runs(work: Path) -> int:
    return int((work / "runs.txt").read_text())


def test_the_same_inputs_restore_the_outputs_without_running_the_step(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("hello")
    assert build(tmp_path).returncode == 0
    assert runs(tmp_path) == 1
    (tmp_path / "out" / "result.txt").unlink()  # a fresh clone has no outputs
    again = build(tmp_path)
    assert again.returncode == 0, again.stderr
    assert runs(tmp_path) == 1, "the step ran again on unchanged inputs"
    assert (tmp_path / "out" / "result.txt").read_text() == "HELLO"
    assert "inputs unchanged" in again.stdout, again.stdout
    assert "not rerun" in again.stdout, again.stdout


def test_a_changed_input_or_key_runs_the_step_again(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("hello")
    build(tmp_path)
    (tmp_path / "src" / "a.txt").write_text("bye")
    assert build(tmp_path).returncode == 0
    assert runs(tmp_path) == 2
    assert (tmp_path / "out" / "result.txt").read_text() == "BYE"
    assert build(tmp_path, "--key", "java 21").returncode == 0
    assert runs(tmp_path) == 3


def test_a_failed_step_stores_nothing_and_runs_next_time(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("hello")
    failing = STEP + "; raise SystemExit(3)"
    assert build(tmp_path, step=failing).returncode == 3
    assert build(tmp_path, step=failing).returncode == 3
    assert runs(tmp_path) == 2, "a failed run was taken for a green one"
    assert not list((tmp_path / "cache" / "builds" / "step").glob("*/.done"))


def test_only_the_newest_keys_are_kept(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for text in ("a", "b", "c", "d", "e"):
        (tmp_path / "src" / "a.txt").write_text(text)
        assert build(tmp_path).returncode == 0
    assert len(list((tmp_path / "cache" / "builds" / "step").glob("*/.done"))) == 3


def test_a_missing_input_is_named(tmp_path: Path) -> None:
    done = build(tmp_path)
    assert done.returncode != 0
    assert "input src does not exist" in done.stderr, done.stderr
