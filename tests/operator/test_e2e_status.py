"""A scale whose learners stall, as its users see it: ``segue status`` and
``kubectl segue status``, and Prometheus' alert and dashboard (issue 27 items 2-4).

WordCount runs on 2 pods with prefilled state and is scaled to 4, its learners paced to
10 records/s (``SEGUE_STANDBY_RESTORE_RATE``) while the input makes each changelog grow
faster, so no learner catches up until the test stops the input. One scale, two kinds
of watcher:

- the status commands, run as a user runs them (subprocesses of the installed scripts
  with the test cluster's kubeconfig, reading through the API server alone): while the
  scale is in flight the JSON shows the learners with their lag (and a rate once two
  reads saw one) and the pods' roles, the human form prints the same screen
  (docs/status.md shows one); once balanced, no learner is left and every pod is a
  settled member. Where the pod runner gives pods addresses the API server proxies to
  (``ipam.LinkIpam``: root, as in CI), every pod's ``/metrics`` is read through
  ``pods/proxy`` and the learners' progress comes from them;
- the stack's Prometheus (``tests.monitoring.stalled``): ``SegueLearnerStalled`` must
  fire naming the app, the task and the member, and clear once the input stopped and
  the learners gain on their changelogs. While it fires (stateless tasks handed over,
  learners stuck, the scale in flight), every panel of the chart's Grafana dashboard
  runs over the test so far as Grafana runs it (``dashboard.assert_panels_have_data``:
  no Grafana server, its queries are what is tested).

Every count stays exact throughout.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue.stack.apps import Apps
from segue.stack.kubelet.ipam import LinkIpam
from tests.faults.harness import NAME, start
from tests.monitoring.dashboard import assert_panels_have_data
from tests.monitoring.stalled import STALLED, WINDOW, stalled, watching
from tests.operator.e2e import OperatorProcess, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

# Records/s a learner restores (SEGUE_STANDBY_RESTORE_RATE) against input of INPUT lines/s:
# its changelog grows faster than it restores, so it stays in flight for as many reads as
# the test wants and makes no progress the alert's window long; once the input stops, it
# catches up in tens of seconds.
LEARNER_PACE = "10"
INPUT = 100
READS = 3  # reads that show learners before the test waits for the alert
JOINING = 3  # seconds the new pods take to start, as a slow image's entry point does
BIN = Path(sys.executable).parent  # segue, kubectl and kubectl-segue (make venv stack)


def status(kube: Any, namespace: str, *extra: str) -> dict[str, Any]:
    argv = [str(BIN / "segue"), "status", NAME, "-n", namespace, "-o", "json", *extra]
    argv += ["--kubeconfig", str(kube.kubeconfig)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shown: dict[str, Any] = json.loads(done.stdout)
    return shown


def watch(
    kube: Any,
    namespace: str,
    seconds: float,
    until: Callable[[dict[str, Any]], bool] = lambda _: False,
    interval: float = 1.0,
) -> list[dict[str, Any]]:
    """``segue status --watch -o json`` until a document satisfies ``until`` (or ``seconds``
    pass), then Ctrl-C as a user stops it: every document it printed, one a line. One
    process refreshing twice a second sees the few seconds new pods are joining; a one-shot
    read a process (interpreter start, two reads a second apart) took 3-4 s under CI's
    load and could miss them."""
    argv = [str(BIN / "segue"), "status", NAME, "-n", namespace, "--watch", "-o", "json"]
    argv += ["--interval", str(interval), "--kubeconfig", str(kube.kubeconfig)]
    # PYTHONFAULTHANDLER: a process that does not stop on Ctrl-C is sent SIGABRT, and its
    # threads' stacks end up in the failure's message.
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    with tempfile.TemporaryFile("w+") as err:  # drained by the OS, read at the end
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            for line in proc.stdout or []:
                lines.put(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        shown: list[dict[str, Any]] = []
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    shown.append(json.loads(lines.get(timeout=1)))
                except queue.Empty:
                    continue
                if until(shown[-1]):
                    break
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                proc.wait(timeout=30)
                err.seek(0)
                stacks = err.read()
                raise AssertionError(f"segue status --watch ignored Ctrl-C:\n{stacks}") from None
            reader.join(timeout=30)
        while not lines.empty():
            shown.append(json.loads(lines.get()))
        err.seek(0)
        assert proc.returncode == 130, err.read()
    return shown


def slow_new_pods(command: list[str]) -> list[str]:
    """The pods' command, its worker started ``JOINING`` s late on the pods of the scale
    (ordinals 2 and up): a new pod joins in about a second otherwise, between two of the
    watch's refreshes, and every refresh of the watch should see it join."""
    late = f'case "$POD_NAME" in *-0|*-1) ;; *) sleep {JOINING} ;; esac; exec "$@"'
    return ["sh", "-c", late, "sh", *command]


def refreshed(documents: int) -> Callable[[dict[str, Any]], bool]:
    """A ``watch`` stop: true once ``documents`` documents were printed, the watch has
    refreshed, rather than watching a settled app for a fixed time."""
    seen = itertools.count(1)
    return lambda _: next(seen) >= documents


def kubectl_segue(kube: Any, namespace: str) -> str:
    """``kubectl segue status``: kubectl finds the wheel's ``kubectl-segue`` on the PATH."""
    env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    argv = [str(BIN / "kubectl"), "segue", "status", NAME]  # kubectl: no flag before a plugin
    argv += ["-n", namespace, "--kubeconfig", str(kube.kubeconfig)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_stalled_scale_shows_in_the_status_and_fires_its_alert_until_balanced(  # noqa: PLR0917
    kafka: Any, apps: Apps, operator: OperatorProcess, pod_runner: Any, kube: Any, tmp_path: Path
) -> None:
    namespace = operator.namespace
    shots: list[dict[str, Any]] = []
    with watching(tmp_path, apps, operator) as prometheus:
        began_wall = time.time()
        run = start(
            kafka, apps, operator, pod_runner, replicas=2, lines=3000, rate=INPUT,
            env={"SEGUE_STANDBY_RESTORE_RATE": LEARNER_PACE}, launch=slow_new_pods,
        )  # fmt: skip
        try:
            assert not stalled(prometheus, "pending")
            assert not stalled(prometheus)
            apps.scale(NAME, 4)
            began = time.monotonic()
            until = lambda shot: bool(shot["learners"])  # noqa: E731
            shots += watch(kube, namespace, 90, until=until, interval=0.5)
            screen = kubectl_segue(kube, namespace)  # the human form, learners in flight
            took = time.monotonic() - began
            (operator.log_dir / "status-screen.txt").write_text(screen)
            while sum(1 for s in shots if s["learners"]) < READS and time.monotonic() - began < 150:
                shots.append(status(kube, namespace))
            wait_for(f"{STALLED} firing", lambda: stalled(prometheus), 180, run.why)
            fired = time.monotonic() - began
            (alert,) = stalled(prometheus)[:1]
            # the pods are scraped too: the learner's own lag, as its worker reports it
            labels = alert["labels"]
            lag = f'segue_task_lag{{pod="{labels["member"]}",task="{labels["task"]}"}}'
            assert prometheus.query(lag), lag
            points = assert_panels_have_data(prometheus, namespace, NAME, began_wall, time.time())

            run.stop()  # the input stops: the changelogs stop growing, the learners gain
            stopped = time.monotonic()
            wait_for(f"{STALLED} cleared", lambda: not stalled(prometheus), 180, run.why)
            cleared = time.monotonic() - stopped
            while shots[-1]["learners"] and time.monotonic() - began < 300:
                shots.append(status(kube, namespace))
            run.balanced(4, timeout=240)
            settled = status(kube, namespace, "--sample", "0")
            watched = watch(kube, namespace, 6, until=refreshed(2))
        finally:
            run.stop()
    run.finish()
    print(f"\n{len(shots)} reads; the screen {took:.1f}s into the scale:\n{screen}")
    print(
        f"{STALLED} (window {WINDOW}) fired {fired:.1f}s into the scale ({labels['task']} on "
        f"{labels['member']}), cleared {cleared:.1f}s after the input stopped; dashboard "
        f"points per panel: {points}"
    )
    learning = [s for s in shots if s["learners"]]
    print(json.dumps(learning[:1], indent=1)[:4000])

    assert (labels["namespace"], labels["app"]) == (namespace, NAME), alert
    assert labels["member"] in {f"{NAME}-2", f"{NAME}-3"}, alert
    words = alert["annotations"]["description"]
    assert f"The learner of task {labels['task']} on {labels['member']}" in words, words
    assert f"-n {namespace}" in words, words
    assert_learners_shown(screen, shots, namespace)
    if isinstance(pod_runner.ctx.ipam, LinkIpam):  # addresses the API server proxies to
        assert_pods_read(screen, learning)
    assert_settled(settled, watched)


def assert_learners_shown(screen: str, shots: list[dict[str, Any]], namespace: str) -> None:
    """The screen and the JSON reads of the scale in flight: the learners (the new pods)
    with their lag and a rate, the pods joining, the reason the app waits."""
    learning = [s for s in shots if s["learners"]]
    assert f"{NAME}  namespace {namespace}" in screen
    assert "LEARNER" in screen
    assert learning, f"no read showed a learner: {shots}"
    first = learning[0]
    assert first["app"] == NAME
    assert first["namespace"] == namespace
    assert first["schema"] == "segue.dev/status/v1"
    roles = {p["name"]: p["role"] for p in first["pods"]}
    assert sorted(roles) == [f"{NAME}-{i}" for i in range(4)], roles
    assert set(roles.values()) <= {"member", "joining"}, roles
    joining = [p["name"] for s in shots for p in s["pods"] if p["role"] == "joining"]
    assert joining, "no read saw the new pods joining"
    for learner in first["learners"]:
        assert learner["member"] in (f"{NAME}-2", f"{NAME}-3"), learner  # the new pods learn
        assert learner["lag"] >= 0
    assert any(learner["lag"] > 0 for s in learning for learner in s["learners"]), learning
    assert any(learner["rate"] is not None for s in learning for learner in s["learners"]), learning
    assert first["waiting_for"].startswith(("Scaling", "Balanced=False")), first["waiting_for"]
    assert sum(p["active"] for p in first["pods"]) > 0


def assert_settled(settled: dict[str, Any], documents: list[dict[str, Any]]) -> None:
    """Balanced at 4: no learner, four settled members, the handovers said; and --watch
    refreshed, one document a line."""
    assert settled["learners"] == []
    assert settled["phase"] == "Running"
    assert sorted(p["role"] for p in settled["pods"]) == ["member"] * 4
    assert all(p["ready"] for p in settled["pods"])
    assert any(h["state"] == "done" for h in settled["handovers"]), settled["handovers"]
    assert settled["waiting_for"].startswith("Balanced=True"), settled["waiting_for"]
    assert len(documents) >= 2, documents  # refreshed, one document a line
    assert all(d["app"] == NAME and d["phase"] == "Running" for d in documents)


def assert_pods_read(screen: str, learning: list[dict[str, Any]]) -> None:
    """Every pod's ``/metrics`` read through ``pods/proxy``, and the learners' progress
    taken from them."""
    first = learning[0]
    unread = [(p["name"], p["metrics_error"]) for p in first["pods"] if p["metrics_error"]]
    assert not unread, unread
    assert "unread" not in screen, screen
    sources = {learner["source"] for s in learning for learner in s["learners"]}
    assert "metrics" in sources, sources
    assert any(learner["restored"] for s in learning for learner in s["learners"]), learning
