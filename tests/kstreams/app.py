"""The example Kafka Streams app (``examples/kafka-streams``) and Segue's plugin jar, built
with Maven into ``$SEGUE_CACHE/m2`` and run as a plain JVM against the test broker: the
plugin goes in as the operator puts it in, a ``-javaagent`` (docs/kafka-streams.md)."""

from __future__ import annotations

import functools
import os
import subprocess
import urllib.request
from pathlib import Path

from segue.stack.paths import KSTREAMS_JAR

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "kafka-streams"


def _mvn(project: Path, *goals: str) -> None:
    m2 = Path(os.environ.get("SEGUE_CACHE", Path.home() / ".cache" / "segue")) / "m2"
    done = subprocess.run(
        ["mvn", "-q", "-B", f"-Dmaven.repo.local={m2}", "-f", str(project / "pom.xml"), *goals],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@functools.cache
def build() -> tuple[Path, str]:
    """(the plugin jar, the example's classpath), built once per test session: every test
    runs the same sources. The jar comes from ``make agent``, which rebuilds it only when
    its sources are newer (``make kstreams`` restores it fresh from its cache)."""
    done = subprocess.run(
        ["make", "-s", "agent"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    _mvn(
        EXAMPLE,
        "package",
        "dependency:build-classpath",
        "-Dmdep.outputFile=target/classpath.txt",
    )
    classpath = (EXAMPLE / "target" / "classpath.txt").read_text().strip()
    return KSTREAMS_JAR, f"{EXAMPLE / 'target' / 'kstreams-wordcount-0.1.0.jar'}:{classpath}"


def start(
    agent: Path, classpath: str, properties: Path, *, port: int, log: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            ["java", f"-javaagent:{agent}", "-cp", classpath, "example.WordCount", str(properties)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env, "SEGUE_METRICS_PORT": str(port)},
        )


def metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return str(reply.read().decode())
