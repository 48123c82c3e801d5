"""Class data sharing for the stack's Kafka JVMs: made once, mapped by every start.

A Kafka broker's start is mostly the JVM loading and verifying its classes. A dynamic
CDS archive of the classes one broker loaded, from its start to its controlled
shutdown, lets every later JVM on the same JDK and jars map them instead, and the suite
starts dozens of brokers (docs/benchmarks.md, "The local stack: a Kafka broker's start").

:func:`ensure` makes the archive (``make stack`` runs ``python -m segue.stack.cds``):
a throwaway broker started with ``-XX:ArchiveClassesAtExit`` and stopped, the archive
written aside and renamed into place, so no JVM ever maps half of one. It lives beside
the Kafka jars it describes, named for the JDK that made it; :func:`flags` hands a JVM
the archive only if it exists. A JVM that finds the archive does not match its JDK or
class path ignores it and loads its classes as before.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

from segue.stack.paths import Binaries


def archive(binaries: Binaries) -> Path:
    """Where the archive for this JDK (its real path and when it was installed) is."""
    java = binaries.java.resolve()
    jdk = hashlib.sha256(f"{java}\0{java.stat().st_mtime_ns}".encode()).hexdigest()[:12]
    return binaries.kafka_libs.parent / f"cds-{jdk}.jsa"


def flags(binaries: Binaries) -> list[str]:
    """The JVM flags that map the archive, if it has been made."""
    found = archive(binaries)
    return [f"-XX:SharedArchiveFile={found}"] if found.exists() else []


def ensure(binaries: Binaries) -> Path:
    """The archive, made first if it is missing."""
    from segue.stack.kafka import KafkaBroker

    target = archive(binaries)
    if target.exists():
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}")  # same file system
    with tempfile.TemporaryDirectory(prefix="segue-cds-") as scratch:
        broker = KafkaBroker(Path(scratch) / "kafka", binaries)
        broker.jvm_flags = [f"-XX:ArchiveClassesAtExit={partial}"]
        broker.start()
        broker.stop(grace=60.0)  # the archive is written as the JVM exits
        if not partial.exists():
            raise RuntimeError(f"the broker exited without writing {partial}")
        os.replace(partial, target)
    return target


def main() -> int:
    made = ensure(Binaries.locate())
    print(f"Kafka's class data sharing archive: {made}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
