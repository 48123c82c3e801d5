"""The compiled build (``make compiled``: setup.py compiles the decision core and the
simulator with mypyc) replays a fleet exactly as the interpreted editable install does.

mypyc checks types at run time and represents ``float``/``int`` natively, so a value
typed one way but given another could change a metric's value or its type; the two
builds' result rows must be equal field for field, in one process each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPILED = ROOT / "build" / "compiled"
pytestmark = pytest.mark.stack  # make compiled, Spark

REPLAY = """
import json
from dataclasses import asdict
from segue.pipeline.catalog import parse
from segue.pipeline.evaluate import build, evaluate_all
from segue.pipeline.fleet import fleet
from segue.pipeline.rows import ScenarioRow

rows = [ScenarioRow("synthetic", i + 1, s.model_dump_json()) for i, s in enumerate(fleet(40, 3))]
rows.append(ScenarioRow("bad", 1, '{"subtopologies": [{"partitions": -1}]}'))
done = evaluate_all(rows, parse("segue(),segue(warmups=1,standbys=1),eager,kip441,keda"))
print(json.dumps({"build": build(), "rows": [[type(r).__name__, asdict(r)] for r in done]}))
"""


@pytest.fixture(scope="module")
def compiled() -> Path:
    done = subprocess.run(
        ["make", "compiled"], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"make compiled failed:\n{done.stdout}\n{done.stderr}"
    return COMPILED


def _python(args: list[str], pythonpath: Path | None) -> subprocess.CompletedProcess[str]:
    """This interpreter in the repository, with ``pythonpath`` first (None: the editable
    install alone)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _replay(pythonpath: Path | None) -> dict[str, Any]:
    done = _python(["-c", REPLAY], pythonpath)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_compiled_build_replays_a_fleet_as_the_interpreter_does(compiled: Path) -> None:
    interpreted = _replay(None)
    fast = _replay(compiled)
    assert interpreted["build"] == "interpreted"
    assert fast["build"] == "compiled", f"{compiled} did not provide the simulator"
    kinds = [kind for kind, _ in interpreted["rows"]]
    assert kinds.count("Result") == 40 * 5
    assert kinds.count("Failure") == 1
    for (kind, mine), (their_kind, theirs) in zip(interpreted["rows"], fast["rows"], strict=True):
        assert (their_kind, theirs) == (kind, mine)


def test_spark_workers_run_the_compiled_build(compiled: Path, tmp_path: Path) -> None:
    """Through ``PYTHONPATH`` as make bench runs it: the workers unpickle the job's policies
    (a compiled frozen dataclass could not be) and replay on the compiled simulator."""
    numbers = tmp_path / "numbers.json"
    bench = ["-m", "bench.pipeline.run", "--scenarios", "6", "--policies", "segue(),keda"]
    done = _python([*bench, "--json", str(numbers)], compiled)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    ran = json.loads(numbers.read_text())
    assert (ran["build"], ran["spark_build"], ran["errors"]) == ("compiled", "compiled", 0)


def test_the_compiled_build_has_the_build_systems_setuptools() -> None:
    """``make compiled`` builds without isolation, with the dev extra's setuptools."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    assert wanted
    assert wanted[0] in project["project"]["optional-dependencies"]["dev"]
