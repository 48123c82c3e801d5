"""README.md, "Running the operator", typed as a newcomer types it after the two setup
commands: one terminal runs ``segue stack up`` (Kafka on localhost:9092, the cluster as
kubectl's current context), another installs Segue with helm, creates the topics, applies
examples/wordcount.yaml, watches it go Running (then Ctrl-C), scales it to 4; then
uninstalls the chart and runs ``segue operator`` with no arguments outside the cluster,
which takes the app over (a scale to 3 settles under it). Ctrl-C in the first terminal
stops everything and takes the context out of kubectl's config again.

Every line comes from the README itself (readme.block); the two waits a user does by eye
(the watch, the operator's log) are expectations on the terminal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import config

from segue.stack.apps import Apps

from .readme import Terminal, block, user_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SECTION = "Running the operator"
APP = "wordcount"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def terminals(home: Path, tmp_path: Path) -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in reversed(opened):
        terminal.close()


def wait(check: Any, timeout: float, what: str) -> float:
    """Seconds until ``check()`` held; fails after ``timeout``."""
    began = time.monotonic()
    while not check():
        assert time.monotonic() - began < timeout, f"{what}: not within {timeout:.0f}s"
        time.sleep(0.2)
    return time.monotonic() - began


def test_the_readme_runs_as_written(home: Path, tmp_path: Path, terminals: list[Terminal]) -> None:
    env = user_env(home)
    first = Terminal(env, tmp_path / "terminal-1.log")
    terminals.append(first)
    activate, up = block(SECTION, 0)
    first.run(activate)
    first.start(up)
    workdir = first.expect(r"work dir (\S+),", timeout=240).group(1)
    first.expect(r"Press Ctrl-C to stop\.", timeout=240)
    kubeconfig = home / ".kube" / "config"
    assert kubeconfig.exists(), "segue stack up did not add its context to ~/.kube/config"
    apps = Apps(config.new_client_from_config(config_file=str(kubeconfig)), "default")

    second = Terminal(env, tmp_path / "terminal-2.log")
    terminals.append(second)
    timings: dict[str, float] = {}
    for line in block(SECTION, 1):
        if line.startswith("kubectl get sapp -w"):
            second.start(line)
            second.expect(rf"{APP}\s+2\s+2\s+2\s+Running", timeout=180)
            second.interrupt()
            continue
        second.run(line)
        if line.startswith("kubectl apply -f examples/wordcount.yaml"):
            timings["apply_to_status_s"] = wait(
                lambda: apps.get(APP).get("status"), 60, "a status after the apply"
            )
        if line.startswith("kubectl scale"):
            replicas = int(re.search(r"--replicas=(\d+)", line).group(1))  # type: ignore[union-attr]
            timings["scale_to_balanced_s"] = wait(
                lambda r=replicas: apps.balanced(APP, r), 180, f"balanced on {replicas} pods"
            )
    # The status came at once, with a running operator: issue 23 asks for 5 s; the bound
    # here is generous for a loaded CI machine (docs/demo.md has the measured figures).
    assert timings["apply_to_status_s"] < 15, timings

    uninstall, crd, operator = block(SECTION, 2)
    second.run(uninstall)
    second.run(crd)
    second.start(operator)
    second.expect(rf"default/{APP}: reconcile loop started", timeout=120)
    apps.scale(APP, 3)
    timings["outside_scale_to_balanced_s"] = wait(
        lambda: apps.balanced(APP, 3), 180, "balanced on 3 pods under `segue operator`"
    )
    second.interrupt(timeout=60)

    stopped = first.interrupt(timeout=120)
    assert "stopped." in stopped, stopped[-3000:]
    assert not kubeconfig.exists(), "the stack's context was left in ~/.kube/config"
    assert not Path(workdir).exists(), f"the stack's work dir {workdir} was left"
    print(f"README, running the operator: {timings}")
