"""Every Kafka JVM of the stack maps the class data sharing archive ``make stack`` made
(``segue.stack.cds``), so a broker starts about a second sooner."""

from __future__ import annotations

import subprocess
from pathlib import Path

from segue.stack import cds
from segue.stack.kafka import KafkaBroker
from segue.stack.paths import Binaries


def test_every_kafka_jvm_maps_the_archive_make_stack_made(
    binaries: Binaries, tmp_path: Path
) -> None:
    made = cds.archive(binaries)
    assert made.exists(), f"{made}: make stack makes it (python -m segue.stack.cds)"
    broker = KafkaBroker(tmp_path / "kafka", binaries)
    command = broker._java("kafka.tools.StorageTool", "random-uuid")
    assert f"-XX:SharedArchiveFile={made}" in command
    # with -Xshare:on a JVM that cannot map the archive (another JDK, another class
    # path) exits with an error instead of loading its classes as before
    done = subprocess.run(
        [command[0], "-Xshare:on", *command[1:]],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
