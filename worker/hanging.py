"""A changelog that a hanging transaction holds open: found at the fence, and refused.

Kafka can record a transaction complete without writing its markers on some of its
partitions (docs/reliability.md, "A transaction committed while the only broker
stops"). There it stays open for good: the partition's last stable offset stops at
its first record, and read_committed readers wait behind it.

``fencing`` has just fenced a task's previous producer when it asks
:func:`changelogs_held`, so nothing legitimately open is left on the task's
changelog partitions: a last stable offset still below the high watermark there is
a hanging transaction. Starting the task anyway would restore its store only up to
that offset, while its input offsets may already include the hanging records: the
task would run on state missing them. So the task is not started; it fails with
:class:`TransactionHanging`, which names the partition and says what to do, and is
retried with back-off like any start failure (``failures``), starting once the
transaction is ended. Segue does not end it itself: Kafka has forgotten which way
it went and the partitions it spanned, and either guess could break exactly-once
somewhere else (docs/reliability.md).

A hanging transaction that holds the task's input offsets instead shows up as a
stable offset fetch that never answers (``kafka.committed_offsets`` says so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from segue.worker.kafka import Partition

Highs = Callable[[Sequence[Partition]], dict[Partition, int]]  # -> high watermarks
Candidate = tuple[str, Mapping[str, Partition], Mapping[str, int]]  # task, changelogs, ends


class TransactionHanging(Exception):
    """A fenced task's changelog still has an open transaction: it must not start."""


def changelogs_held(fenced: Sequence[Candidate], highs: Highs) -> dict[str, TransactionHanging]:
    """Of the tasks just fenced (each with its changelog partitions by store and their
    last stable ends), those a changelog partition of which is held open, and why."""
    wanted = [tp for _, changelogs, _ in fenced for tp in changelogs.values()]
    if not wanted:
        return {}
    high = highs(wanted)
    out: dict[str, TransactionHanging] = {}
    for task, changelogs, ends in fenced:
        for store, (topic, partition) in sorted(changelogs.items()):
            stable, top = ends[store], high.get((topic, partition), -1)
            if stable < top:
                out[task] = TransactionHanging(
                    f"task {task}: changelog {topic}[{partition}] has a transaction open at "
                    f"offset {stable} (high watermark {top}) after the fence, one nobody "
                    "will end (Kafka left it hanging, or another producer writes there); "
                    "the task waits rather than restore a partial changelog "
                    "(docs/reliability.md)"
                )
                break
    return out
