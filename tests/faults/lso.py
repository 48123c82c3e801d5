"""Telling a hanging Kafka transaction from a Segue failure, for the fault suite.

A transaction hangs when the broker writes no marker for it on a partition it
touched: that partition's last stable offset (LSO) stops while its high watermark
goes on, and read_committed readers (the workers' inputs, their stable offset
fetch) wait behind it. Kafka does this to a transaction that commits while its
only broker stops (docs/reliability.md, "A transaction committed while the only
broker stops"), so ``test_restart[broker]`` watches every partition's ends from
the broker's restart on (:class:`LsoWatch`) and, once its resume check failed, asks
whether that is why.

A live transaction cannot hold an LSO this long: the coordinator rolls back one
open past its timeout (the workers' 10 s) within its 10 s check interval, so an
LSO below the high watermark and unmoved for ``HELD`` s was a hanging one, even if
the producer that wrote it ended it later with a commit of its own.
"""

from __future__ import annotations

import threading
import time

from segue.worker.kafka import Admin, Partition

HELD = 25.0  # > transaction.timeout.ms (10 s) + the coordinator's 10 s abort check


def ends(admin: Admin, partitions: list[Partition]) -> dict[Partition, tuple[int, int]]:
    """(topic, partition) -> (last stable offset, high watermark)."""
    stable, high = admin.end_offsets(partitions), admin.high_watermarks(partitions)
    return {tp: (stable[tp], high[tp]) for tp in partitions if tp in stable and tp in high}


class LsoWatch(threading.Thread):
    """Samples every partition's (LSO, high watermark) every ``every`` s until halted."""

    def __init__(self, bootstrap: str, every: float = 2.0) -> None:
        super().__init__(daemon=True)
        self.admin, self.every = Admin(bootstrap, {}), every
        self.halt = threading.Event()
        self.samples: list[tuple[float, dict[Partition, tuple[int, int]]]] = []

    def run(self) -> None:
        while not self.halt.wait(self.every):
            try:
                metadata = self.admin.client.list_topics(timeout=5)
                parts = [(n, p) for n, topic in metadata.topics.items() for p in topic.partitions]
                self.samples.append((time.monotonic(), ends(self.admin, parts)))
            except Exception:  # the broker may be away: a gap in the samples
                continue

    def held(self, longer_than: float = HELD) -> dict[Partition, int]:
        """Partitions whose LSO stayed below the high watermark, unmoved, for more than
        ``longer_than`` s at some point: partition -> that LSO."""
        since: dict[Partition, tuple[int, float]] = {}  # partition -> (LSO, first seen)
        out: dict[Partition, int] = {}
        for at, ends in list(self.samples):
            for tp, (lso, high) in ends.items():
                first = since.get(tp)
                if lso >= high:
                    since.pop(tp, None)
                elif first is None or first[0] != lso:
                    since[tp] = (lso, at)
                elif at - first[1] > longer_than:
                    out[tp] = lso
        return out
