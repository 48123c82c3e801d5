"""``segue stack demo --quick``, as ``make demo DEMO_ARGS=--quick`` runs it with no
terminal: its own local stack, Segue helm-installed, WordCount on prefilled state under
steady input, scaled and a pod killed; the JSON line says nothing was lost or
duplicated, that it ended balanced and that tasks were handed over, and the report's
HTML and PNGs exist. Ctrl-C in the middle stops everything: the command exits and no
process it started (stack, operator, pods) is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SEGUE = str(Path(sys.executable).with_name("segue"))
PNGS = ("lag.png", "throughput.png", "pods.png", "pauses.png")


def demo(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    report, work = str(tmp_path / "report"), str(tmp_path / "work")
    return subprocess.Popen(
        [SEGUE, "stack", "demo", "--quick", "--report", report, "--workdir", work, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a Ctrl-C of our own, not the terminal's
    )


def leftovers(workdir: Path) -> list[str]:
    """Processes whose command line or environment names the show's work dir."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if str(workdir).encode() in seen:
            found.append(f"{proc.name}: {(proc / 'cmdline').read_bytes()[:200]!r}")
    return found


def test_quick_demo_counts_exact_and_writes_its_report(tmp_path: Path) -> None:
    began = time.monotonic()
    proc = demo(tmp_path)
    out, _ = proc.communicate(timeout=600)
    took = time.monotonic() - began
    assert proc.returncode == 0, out[-5000:]
    result = json.loads(next(line for line in reversed(out.splitlines()) if line.startswith("{")))
    assert result["records_lost"] == 0, result
    assert result["records_duplicated"] == 0, result
    assert result["balanced"] is True, result
    assert result["handovers"] > 0, result
    assert result["records_out"] >= result["records_sent"] > 20_000, result
    assert result["max_pause_ms"] >= result["p99_pause_ms"] >= result["p50_pause_ms"] > 0
    report = tmp_path / "report"
    assert (report / "report.html").stat().st_size > 0
    for png in PNGS:
        assert (report / png).read_bytes().startswith(b"\x89PNG"), png
        assert png in (report / "report.html").read_text()
    assert leftovers(tmp_path / "work") == []
    print(f"quick demo: {took:.0f}s; {json.dumps(result)}")


def test_ctrl_c_mid_show_stops_everything(tmp_path: Path) -> None:
    proc = demo(tmp_path)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:  # until the first step is under way
        lines.append(line)
        if "step 1/" in line:
            break
    else:
        pytest.fail("the show ended before its first step:\n" + "".join(lines[-50:]))
    time.sleep(3)
    stopped = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends its foreground group
    rest, _ = proc.communicate(timeout=120)
    took = time.monotonic() - stopped
    assert proc.returncode == 130, rest[-3000:]
    assert "interrupted: stopping everything" in rest
    assert rest.rstrip().splitlines()[-1].startswith("stopped (")
    assert leftovers(tmp_path / "work") == []
    print(f"Ctrl-C: everything stopped in {took:.1f}s")
