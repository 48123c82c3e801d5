"""Telling a hanging Kafka transaction from a Segue failure, for the fault suite.

A transaction hangs when the broker writes no marker for it on a partition it
touched: that partition's last stable offset (LSO) stops while its high watermark
goes on, and read_committed readers (the workers' inputs, their stable offset
fetch) wait behind it for good. Kafka does this to a transaction that commits
while its only broker stops (docs/reliability.md, "A transaction committed while
the only broker stops"), so ``test_restart[broker]`` asks this module, once its
resume check failed, whether that is why.

A live transaction cannot hold an LSO this long: the coordinator rolls back one
open past its timeout (the workers' 10 s) within its 10 s check interval, so an
LSO below the high watermark and unmoved for ``WINDOW`` s is a hanging one.
"""

from __future__ import annotations

import time

from segue.worker.kafka import Admin

WINDOW = 25.0  # > transaction.timeout.ms (10 s) + the coordinator's 10 s abort check

Partition = tuple[str, int]


def _ends(admin: Admin, partitions: list[Partition]) -> dict[Partition, tuple[int, int]]:
    """(topic, partition) -> (last stable offset, high watermark)."""
    stable, high = admin.end_offsets(partitions), admin.high_watermarks(partitions)
    return {tp: (stable[tp], high[tp]) for tp in partitions if tp in stable and tp in high}


def held_partitions(bootstrap: str, window: float = WINDOW) -> dict[Partition, int]:
    """Partitions (internal ones too) whose LSO stayed below the high watermark and did
    not move for ``window`` s: partition -> the stuck LSO (the hanging transaction's
    first offset)."""
    admin = Admin(bootstrap, {})
    metadata = admin.client.list_topics(timeout=10)
    partitions = [(name, p) for name, topic in metadata.topics.items() for p in topic.partitions]
    before = _ends(admin, partitions)
    time.sleep(window)
    after = _ends(admin, partitions)
    return {
        tp: lso
        for tp, (lso, high) in after.items()
        if lso < high and before.get(tp, (-1, -1))[0] == lso < before[tp][1]
    }
