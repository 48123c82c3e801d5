"""README.md's first command, ``make demo``, and its two-minute version ``make demo
DEMO_ARGS=--quick``, run exactly as written from the repository's root with a newcomer's
environment: no flag added, the report in the default ``./demo-report``, the stack in a
temporary work dir of its own. ``make demo`` runs in a real terminal (its live view);
the quick one through a pipe (its plain lines). Each must end with its report and a
JSON line that says nothing was lost or duplicated and the app ended balanced, and
leave no process and no work dir behind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .readme import README, ROOT, Terminal, block, leftovers, user_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]
REPORT = ROOT / "demo-report"  # the default --report, relative to where make runs
PNGS = ("lag.png", "throughput.png", "pods.png", "pauses.png")
QUICK = "make demo DEMO_ARGS=--quick"


def check_the_show(out: str, began: float) -> dict[str, Any]:
    """The JSON line's promises, the report's files (written by this run), and nothing
    left behind; the JSON line."""
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith('{"handovers"')), None)
    assert line is not None, f"no JSON line:\n{out[-5000:]}"
    result: dict[str, Any] = json.loads(line)
    assert result["records_lost"] == 0, result
    assert result["records_duplicated"] == 0, result
    assert result["balanced"] is True, result
    assert result["handovers"] > 0, result
    assert result["records_out"] >= result["records_sent"] > 20_000, result
    assert result["max_pause_ms"] >= result["p99_pause_ms"] >= result["p50_pause_ms"] > 0
    assert result["apply_to_status_s"] is not None, result
    assert result["apply_to_ready_s"] is not None, result
    html = REPORT / "report.html"
    assert html.stat().st_mtime > began, "report.html was not written by this run"
    for png in PNGS:
        assert (REPORT / png).read_bytes().startswith(b"\x89PNG"), png
        assert png in html.read_text()
    workdir = re.search(r"export KUBECONFIG=(\S+)/kube/admin\.kubeconfig", out)
    assert workdir is not None, "the show did not say where its stack runs"
    assert not Path(workdir.group(1)).exists(), f"{workdir.group(1)} was left behind"
    assert leftovers(Path(workdir.group(1))) == []
    return result


def test_the_quick_demo_as_written(tmp_path: Path) -> None:
    assert f"`{QUICK}`" in README.read_text()
    shutil.rmtree(REPORT, ignore_errors=True)
    began = time.time()
    done = subprocess.run(
        ["bash", "-c", QUICK],
        cwd=ROOT,
        env=user_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-5000:]
    result = check_the_show(out, began)
    print(f"{QUICK}: {time.time() - began:.0f}s; {json.dumps(result)}")


def test_make_demo_as_written_in_a_terminal(tmp_path: Path) -> None:
    line = block("Two commands")[0]
    assert line.startswith("make demo ")
    shutil.rmtree(REPORT, ignore_errors=True)
    terminal = Terminal(user_env(tmp_path), tmp_path / "terminal.log")
    began = time.time()
    try:
        out = terminal.run(line, timeout=1100)
    finally:
        terminal.close()
    result = check_the_show(out.replace("\r", ""), began)
    print(f"make demo: {time.time() - began:.0f}s; {json.dumps(result)}")
