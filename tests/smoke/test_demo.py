"""Ctrl-C in the middle of ``segue stack demo --quick`` stops everything: the command
exits 130 and no process it started (stack, operator, pods) is left, nor its work dir.
(The show itself, run exactly as the README says, is tests/readme/test_make_demo.py.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.readme.readme import leftovers

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SEGUE = str(Path(sys.executable).with_name("segue"))


def test_ctrl_c_mid_show_stops_everything(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [SEGUE, "stack", "demo", "--quick"],
        cwd=tmp_path,  # its default report folder is ./demo-report
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a Ctrl-C of our own, not the terminal's
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:  # until the first step is under way
        lines.append(line)
        if "step 1/" in line:
            break
    else:
        pytest.fail("the show ended before its first step:\n" + "".join(lines[-50:]))
    workdir = re.search(r"export KUBECONFIG=(\S+)/kube/admin\.kubeconfig", "".join(lines))
    assert workdir is not None, "".join(lines[-50:])
    time.sleep(3)
    stopped = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends its foreground group
    rest, _ = proc.communicate(timeout=120)
    took = time.monotonic() - stopped
    assert proc.returncode == 130, rest[-3000:]
    assert "interrupted: stopping everything" in rest
    assert rest.rstrip().splitlines()[-1].startswith("stopped (")
    assert leftovers(Path(workdir.group(1))) == []
    assert not Path(workdir.group(1)).exists()
    print(f"Ctrl-C: everything stopped in {took:.1f}s")
