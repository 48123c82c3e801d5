"""Every ``segue`` process starts quickly (issue 51): ``segue --help`` and ``segue status
--help`` within 0.5 s, a 20,000-task ``segue assign`` (1,000 members -> 1,100) within 1 s
from process start to exit.

The venv's real ``segue`` script is run, as a user or ``kubectl segue`` runs it. A time is
the best of a few runs, not their median: other work on the machine (the suite in
parallel) only ever adds to a run, so the fastest is the closest to what the command
itself costs. What the commands import is checked without a clock too (``sys.modules``
as the script exits): help loads none of the heavy libraries, nor ``importlib.metadata``,
and that plan loads no numpy. docs/ci.md, "CLI start-up", has the figures. The
environment is cleared as in test_cli_required_only.py, so neither a flag's variable nor
coverage's subprocess hook reaches the command.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.assignor.scenarios import Case, pods

SEGUE = str(Path(sys.executable).with_name("segue"))
RUNS = 5
# Imported by a layer's own run only, never to build the parser. importlib.metadata:
# reading the subcommands' entry points through it cost more than the rest of the help.
HEAVY = (
    "numpy", "ortools", "pydantic", "pydantic_core", "kubernetes", "kopf", "confluent_kafka",
    "prometheus_client", "rocksdict", "yaml", "cryptography", "pyspark", "matplotlib", "rich",
    "importlib.metadata",
)  # fmt: skip


# Runs the ``segue`` script as its own process does, then lists every module it imported
# (Python's -X importtime report misses those importlib.import_module loads).
PROBE = """
import json, runpy, sys
out, sys.argv = sys.argv[1], sys.argv[2:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
with open(out, "w") as file:
    json.dump(sorted(sys.modules), file)
"""


def run(
    args: list[str], cwd: Path, stdin: bytes = b"", command: tuple[str, ...] = (SEGUE,)
) -> tuple[float, str]:
    """Seconds from process start to exit, and stdout, of one ``segue`` run."""
    start = time.perf_counter()
    done = subprocess.run(
        [*command, *args], cwd=cwd, input=stdin, capture_output=True, timeout=120, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )  # fmt: skip
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return seconds, done.stdout.decode()


def best(args: list[str], cwd: Path, runs: int = RUNS, stdin: bytes = b"") -> float:
    return min(run(args, cwd, stdin)[0] for _ in range(runs))


def imported(args: list[str], cwd: Path, stdin: bytes = b"") -> set[str]:
    """Every module one ``segue`` run has imported by its exit."""
    out = cwd / "modules.json"
    run(args, cwd, stdin, command=(sys.executable, "-c", PROBE, str(out), SEGUE))
    return set(json.loads(out.read_text()))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY))


def request_20000() -> bytes:
    """bench/assignor's case "20,000 over 1,000 -> 1,100": settled, then 100 members join."""
    case = Case("20,000", [(20000, True)], pods(1000), pods(1100), max_warmup_replicas=200)
    return json.dumps(case.request()).encode()


@pytest.mark.parametrize("args", [["--help"], ["status", "--help"]])
def test_help_loads_no_heavy_module_and_is_quick(args: list[str], tmp_path: Path) -> None:
    modules = imported(args, tmp_path)
    assert "segue.operator.status.cli" in modules, sorted(modules)  # the command was run
    assert heavy(modules) == []
    seconds = best(args, tmp_path)
    assert seconds < 0.5, f"segue {' '.join(args)}: {seconds:.2f} s, the best of {RUNS}"


def test_the_module_check_sees_heavy_modules_when_they_load(tmp_path: Path) -> None:
    """The check above can fail: a run that needs the models and the solver shows them."""
    request = {"tasks": [{"id": "0_0", "stateful": True}], "members": [{"id": "a"}]}
    modules = imported(["assign"], tmp_path, json.dumps(request).encode())
    assert {"pydantic", "ortools"} <= set(heavy(modules)), heavy(modules)


def test_assign_of_20000_tasks_is_done_within_a_second(tmp_path: Path) -> None:
    request = request_20000()
    _, out = run(["assign"], tmp_path, request)
    stats = json.loads(out)["stats"]
    assert (stats["tasks"], stats["members"], stats["pending"] > 0) == (20000, 1100, True)
    # Its flow network (5,300 arcs) is loaded arc by arc: numpy would cost more to import.
    assert "numpy" not in heavy(imported(["assign"], tmp_path, request))
    seconds = best(["assign"], tmp_path, stdin=request)
    assert seconds < 1.0, f"segue assign, 20,000 tasks: {seconds:.2f} s, the best of {RUNS}"


def test_the_subcommands_read_are_the_entry_points_importlib_reads() -> None:
    """segue.commands reads the entry point files itself; the standard reading agrees."""
    from importlib.metadata import entry_points

    from segue.commands import GROUP, installed

    expected = {point.name: point.value for point in entry_points(group=GROUP)}
    assert installed() == expected
    assert {"assign", "operator", "simulate", "status", "worker", "stack"} <= set(expected)


@pytest.mark.parametrize(
    "package", ["segue.assignor", "segue.protocol", "segue.stack", "segue.worker"]
)
def test_each_name_a_package_loads_on_first_use_is_there(package: str) -> None:
    """These packages import a name's module only when it is asked for (so a CLI module
    in them imports alone); every name they export is found."""
    module = importlib.import_module(package)
    assert [name for name in module.__all__ if getattr(module, name, None) is None] == []
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def test_a_worker_starts_without_the_kubernetes_client(tmp_path: Path) -> None:
    """``segue worker`` as in a pod (its ServiceAccount's files, the API server's service
    variables; neither Kafka nor the API server answers), stopped once it has asked for
    its assignment: by then it has loaded no ``kubernetes``, whose client cost each new
    pod 0.8 s of CPU before it could report (bench/worker/start.py, docs/benchmarks.md
    "Worker start")."""
    from segue.podenv import CA_FILE, NAMESPACE_FILE, POD_ROOT_ENV, TOKEN_FILE
    from segue.stack.certs import create_pki
    from segue.stack.process import free_port

    root = tmp_path / "root"
    for path, text in ((TOKEN_FILE, "t"), (NAMESPACE_FILE, "ns"), (CA_FILE, "")):
        (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / path.lstrip("/")).write_text(text)
    (root / CA_FILE.lstrip("/")).write_bytes(create_pki(tmp_path / "pki").ca.cert.read_bytes())
    out, closed = tmp_path / "modules.json", str(free_port())
    args = ["worker", "--app", "segue.worker.apps.wordcount:topology", "--member", "w-0"]
    args += ["--namespace", "ns", "--assignment-configmap", "a", "--metrics-port", "0"]
    args += ["--bootstrap-servers", f"127.0.0.1:{closed}", "--state-dir", str(tmp_path / "s")]
    args += ["--shutdown-timeout", "1"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), POD_ROOT_ENV: str(root)}
    env |= {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": closed}
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE, str(out), SEGUE, *args],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        # its first request for the assignment, refused (nothing listens)
        said = next((line for line in proc.stderr if "assignment watch failed" in line), "")
        assert "Connection refused" in said, f"the worker ended first: {proc.wait(30)}"
    finally:
        proc.terminate()
        proc.wait(30)
    modules = set(json.loads(out.read_text()))
    assert {"segue.worker.kubeapi", "segue.worker.runtime"} <= modules
    assert [m for m in modules if m.split(".")[0] == "kubernetes"] == []
