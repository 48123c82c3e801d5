"""A Kafka broker's start, with the class data sharing archive ``make stack`` makes
(``segue.stack.cds``) and without it: ``KafkaBroker.start`` on a new data directory
(storage format, launch, first metadata answer), alternating A B A B, medians and the
ratio pair by pair.

    .venv/bin/python -m bench.stack.broker_start [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.ab import alternate, ratio, report
from segue.stack import cds
from segue.stack.kafka import KafkaBroker
from segue.stack.paths import Binaries


def once(binaries: Binaries, shared: bool) -> float:
    """Seconds of one broker's start on a new data directory."""
    with tempfile.TemporaryDirectory(prefix="bench-broker-") as scratch:
        broker = KafkaBroker(Path(scratch) / "kafka", binaries)
        if not shared:
            broker.jvm_flags = []
        began = time.monotonic()
        broker.start()
        took = time.monotonic() - began
        broker.stop()
    return took


def main(runs: int) -> str:
    binaries = Binaries.locate()
    cds.ensure(binaries)
    once(binaries, True)  # warm the page cache
    pairs = alternate(lambda: once(binaries, False), lambda: once(binaries, True), runs)
    plain, shared = (statistics.median(p[i] for p in pairs) for i in (0, 1))
    return report(
        f"{runs} starts each",
        ("broker start", "seconds"),
        [
            ("without the archive", f"{plain:.2f}"),
            ("with the archive (-XX:SharedArchiveFile)", f"{shared:.2f}"),
        ],
        f"ratio, without / with, pair by pair: {ratio(pairs):.2f}x",
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="starts of each (default 5)")
    print(main(parser.parse_args().runs))
