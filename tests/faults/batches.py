"""A topic's record batches as a broker wrote them, read from its log files with
Kafka's own ``DumpLogSegments`` (kafka-tools): who produced each batch, with which
sequence numbers, and the keys it holds. A consumer sees none of this, and it is what
tells apart the two ways a word can be counted once too often (``evidence`` quotes it
when a count is off):

- the broker appended one batch twice: both copies carry the same producer id, epoch
  and base sequence (the worker produced the records once; the idempotent producer's
  retry was not recognised);
- the records were produced twice: each copy has sequences of its own, and an epoch of
  its own when two incarnations of the task (two fences of its transactional id)
  processed the same input.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue.stack.paths import Binaries, cache_dir, read_versions

HEADER = re.compile(
    r"baseOffset: (?P<base>\d+) .*baseSequence: (?P<seq>-?\d+) lastSequence: (?P<last>-?\d+) "
    r"producerId: (?P<pid>-?\d+) producerEpoch: (?P<epoch>-?\d+) .*"
    r"isTransactional: (?P<txn>\w+) isControl: (?P<control>\w+)"
)
RECORD = re.compile(r"^\| offset: \d+ .* key: (?P<key>\S*)")


@dataclass(frozen=True)
class Batch:
    partition: int
    base_offset: int
    producer: tuple[int, int]  # (producer id, epoch)
    sequences: tuple[int, int]  # (base, last)
    transactional: bool
    control: bool
    keys: tuple[str, ...]

    def describe(self) -> str:
        pid, epoch = self.producer
        first, last = self.sequences
        return (
            f"[{self.partition}]@{self.base_offset} producer {pid} epoch {epoch} "
            f"seq {first}..{last} keys {' '.join(self.keys[:8])}"
        )


def parse(dump: str) -> list[Batch]:
    """``DumpLogSegments --deep-iteration --print-data-log`` output, as batches; each
    file's partition is read from its directory name (``<topic>-<partition>``)."""
    batches: list[Batch] = []
    partition, header, keys = -1, None, []

    def close() -> None:
        if header is not None:
            batches.append(
                Batch(
                    partition,
                    int(header["base"]),
                    (int(header["pid"]), int(header["epoch"])),
                    (int(header["seq"]), int(header["last"])),
                    header["txn"] == "true",
                    header["control"] == "true",
                    tuple(keys),
                )
            )

    for line in dump.splitlines():
        if line.startswith("Dumping "):
            close()
            header, keys = None, []
            partition = int(Path(line.split(" ", 1)[1]).parent.name.rsplit("-", 1)[1])
        elif (found := HEADER.search(line)) is not None:
            close()
            header, keys = found, []
        elif (record := RECORD.match(line)) is not None:
            keys.append(record["key"])
    close()
    return batches


def read_batches(data_dir: Path, topic: str, timeout: float = 120.0) -> list[Batch]:
    """Every batch of every partition of ``topic`` held in one broker's ``data_dir``."""
    files = sorted(str(f) for f in data_dir.glob(f"{topic}-*/*.log"))
    if not files:
        return []
    libs = cache_dir() / f"kafka-tools-{read_versions()['KAFKA_VERSION']}" / "libs"
    command = [
        str(Binaries.locate().java),
        "-cp",
        f"{libs}/*",
        "org.apache.kafka.tools.DumpLogSegments",
        "--deep-iteration",
        "--print-data-log",
        "--files",
        ",".join(files),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    return parse(done.stdout)


def appended_twice(batches: list[Batch]) -> list[list[Batch]]:
    """Data batches the broker holds more than once: the same producer, epoch and base
    sequence in one partition, at different offsets."""
    seen: dict[tuple[int, tuple[int, int], int], list[Batch]] = defaultdict(list)
    for batch in batches:
        if not batch.control and batch.producer[0] >= 0:
            seen[(batch.partition, batch.producer, batch.sequences[0])].append(batch)
    return [group for group in seen.values() if len(group) > 1]


def batch_evidence(kafka: Any, topic: str, word: str) -> str:
    """What the first broker holding ``topic`` says of its batches: those appended
    twice, else how many batches and producer epochs carry ``word`` (then the records
    were produced twice, by one incarnation or two)."""
    try:
        for node in getattr(kafka, "nodes", [kafka]):
            batches = read_batches(Path(node.data_dir), topic)
            if batches:
                break
        else:
            return f"(no log files of {topic} found)"
        twice = appended_twice(batches)
        if twice:
            groups = ["; ".join(b.describe() for b in group) for group in twice]
            return f"{topic}: batches appended twice (same producer, epoch, sequence): " + (
                " | ".join(groups)
            )
        mine = [b for b in batches if word in b.keys]
        epochs = sorted({b.producer for b in mine})
        return (
            f"{topic}: no batch appended twice; {word} is in {len(mine)} batch(es) of "
            f"{len(epochs)} producer epoch(s): the records were produced twice"
        )
    except Exception as exc:  # evidence is best effort: never hide the failure itself
        return f"(could not read the batches of {topic}: {exc!r})"
