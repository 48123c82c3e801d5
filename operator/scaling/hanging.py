"""The ``TransactionsEnded`` condition: is a partition of the app held by a transaction
nobody will end?

An open transaction holds its partitions' last stable offset (LSO) at its first record:
read_committed readers (the app's own tasks reading a repartition topic, a task
restoring its changelog, the consumers of its output) wait there until a commit or
abort marker arrives. Every transaction of the app ends within its producers'
``transaction.timeout.ms`` plus the coordinator's abort check
(:mod:`segue.protocol.transactions`), so a sink or changelog partition whose LSO stays
below its high watermark, unmoved, for longer than :data:`BOUND` is held by one that
will never end by itself: Kafka left it hanging (docs/reliability.md, "A transaction
committed while the only broker stops"), or a producer outside the app writes there with
a longer timeout. Segue cannot end it safely (``segue.worker.hanging`` says why); a
person can, with KIP-664's ``kafka-transactions.sh``, and the condition gives the
partition, the offset and the commands.

Pure: the shell reads each look's (LSO, high watermark) pairs and keeps what
:func:`watch` returns between looks (in its process: an LSO that moves on every look
would churn the status), the time comes from ``World.now``. A restarted operator starts
watching afresh; until it has watched for :data:`BOUND` it keeps a ``False`` it finds in
the status rather than clear it, and then decides again.
"""

from __future__ import annotations

from collections.abc import Mapping

from segue.protocol.tasks import task_id
from segue.protocol.transactions import ABORT_CHECK_MS, TIMEOUT_MS

from .model import Condition, Event, Stall, World

TYPE = "TransactionsEnded"
HANGING = "TransactionHanging"  # the reason while one is held, and its Warning event
ENDED = "TransactionEnded"  # the Normal event once none is held any more
BOUND = (TIMEOUT_MS + ABORT_CHECK_MS) / 1000 + 5.0  # s; 5 s for looks and clocks
NAMED = 5  # held partitions named in the message; the rest counted
TOOL = "kafka-transactions.sh"  # KIP-664's command, in Kafka's bin/

Partition = tuple[str, int]


def watch(
    before: Mapping[Partition, Stall], ends: Mapping[Partition, tuple[int, int]], now: float
) -> dict[Partition, Stall]:
    """The partitions whose LSO is below the high watermark in ``ends`` ((LSO, high
    watermark) each), and since when at that LSO: kept from ``before`` while unmoved."""
    out: dict[Partition, Stall] = {}
    for tp, (stable, high) in sorted(ends.items()):
        if stable < high:
            was = before.get(tp)
            out[tp] = was if was is not None and was.stable == stable else Stall(stable, now)
    return out


def held(world: World) -> dict[Partition, Stall]:
    """Of this look's stalls, those unmoved for longer than :data:`BOUND`."""
    stalls = world.stalls or {}
    return {tp: s for tp, s in sorted(stalls.items()) if world.now - s.since > BOUND}


def hanging_condition(world: World) -> Condition:
    before = world.conditions.get(TYPE)
    if world.stalls is None:
        return before or Condition(TYPE, "Unknown", "NotObserved", "offsets not read yet")
    now_held = held(world)
    if now_held:
        return Condition(TYPE, "False", HANGING, _message(world, now_held))
    started = world.watched_since if world.watched_since is not None else world.now
    if (
        before is not None
        and before.status == "False"
        and world.now - started <= BOUND
        and any(s.since <= started for s in world.stalls.values())
    ):
        return before  # watched too briefly to tell whether that one is still held
    return Condition(
        TYPE,
        "True",
        "NoneHanging",
        f"no sink or changelog partition of the app has been held by an open transaction "
        f"for over {BOUND:g}s",
    )


def hanging_events(world: World, now: Condition) -> list[Event]:
    """A Warning when a partition is held (again whenever the held ones change), a
    Normal once none is; nothing while it stays as it was."""
    before = world.conditions.get(TYPE)
    if now.status == "False" and (before is None or before.message != now.message):
        return [Event("Warning", HANGING, now.message)]
    if now.status == "True" and before is not None and before.status == "False":
        return [Event("Normal", ENDED, "no partition of the app is held by a transaction now")]
    return []


def _message(world: World, now_held: Mapping[Partition, Stall]) -> str:
    parts = [_one(world, tp, s) for tp, s in list(now_held.items())[:NAMED]]
    more = len(now_held) - NAMED
    return (
        f"{len(now_held)} partition(s) held by a transaction nobody will end (the last "
        f"stable offset unmoved below the high watermark for over {BOUND:g}s, longer than "
        f"any transaction of the app lives; read_committed readers wait there): "
        + "; ".join(parts)
        + (f"; and {more} more" if more > 0 else "")
        + ". Abort every partition of that transaction; a changelog's task must then "
        "restore from scratch: delete its local state on every pod "
        '(docs/reliability.md, "Held partitions")'
    )


def _one(world: World, tp: Partition, stall: Stall) -> str:
    topic, partition = tp
    server = f"{TOOL} --bootstrap-server {world.bootstrap or '<bootstrap>'}"
    where = f"--topic {topic} --partition {partition}"
    what = f"sink {topic}[{partition}]"
    for sub in world.subtopologies or ():
        if topic in sub.changelog_topics:
            what = f"changelog {topic}[{partition}] (task {task_id(sub.id, partition)})"
    return (
        f"{what} at offset {stall.stable}: find it with `{server} find-hanging {where}`, "
        f"end it with `{server} abort {where} --start-offset {stall.stable}`"
    )
