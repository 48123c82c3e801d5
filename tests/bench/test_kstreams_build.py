"""The Java side of bench/kstreams builds with Maven from Maven Central (``run.sh``, jars
cached in ``$SEGUE_CACHE/m2``), the driver answers ``--help``, and the instance starts
on the built classpath and refuses a malformed argument by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.kstreams.kstreams_side import classpath

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def test_run_sh_builds_the_java_wordcount_and_the_instance_starts() -> None:
    built = subprocess.run(
        ["bash", "bench/kstreams/run.sh", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "--probing-ms" in built.stdout
    started = subprocess.run(
        ["java", "-cp", classpath(), "segue.bench.WordCountInstance", "bootstrap"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode != 0
    assert "argument bootstrap is not key=value" in started.stderr, started.stderr[-2000:]
