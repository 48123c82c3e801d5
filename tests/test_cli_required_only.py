"""Each ``segue`` subcommand run as a user first runs it: with only its required
arguments, every optional one left to its default (issue 23: a default that was never
run crashed ``make demo`` for every new user).

``segue operator`` (no arguments, kubectl's config), ``segue stack up`` and ``segue stack
demo`` (as ``make demo``) are run that way, as the README writes them, by tests/readme.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.stack  # segue simulate on Spark

SEGUE = str(Path(sys.executable).with_name("segue"))


def segue(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # nothing set that a flag could read
    return subprocess.run(
        [SEGUE, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip


def test_assign_reads_standard_input(tmp_path: Path) -> None:
    tasks = [{"id": t, "stateful": True} for t in ("0_0", "0_1")]
    request = {"tasks": tasks, "members": [{"id": "a"}, {"id": "b"}]}
    done = segue("assign", cwd=tmp_path, stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert sorted(decision["target"]) == ["a", "b"], decision


def test_worker_with_only_its_app_names_each_missing_setting(tmp_path: Path) -> None:
    done = segue("worker", "--app", "segue.worker.apps.wordcount:topology", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "segue worker: invalid configuration:",
        "  --member (env POD_NAME): missing",
        "  --namespace (env POD_NAMESPACE): missing",
        "  --assignment-configmap (env SEGUE_ASSIGNMENT_CONFIGMAP): missing",
        "  --bootstrap-servers (env SEGUE_BOOTSTRAP_SERVERS): missing",
    ]


@pytest.mark.timeout(600)
def test_simulate_with_a_source_and_an_output_only(tmp_path: Path) -> None:
    done = segue("simulate", "--synthetic", "2", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 scenarios x 11 policies" in done.stdout + done.stderr
    assert (tmp_path / "out" / "report.html").stat().st_size > 0
