"""The shell's half of the held-partition watch: read the offsets, remember, pass them on.

The decision core tells a partition held by a transaction nobody will end from one a
live transaction holds by how long its last stable offset stays put
(``segue.operator.scaling.hanging``), so something must remember, between looks, since
when each offset stood. That memory lives here, per app, in the operator's process: an
offset that moves on every look would rewrite the StreamApp's status on every look if it
were kept there. A restarted operator, or a new leader, starts watching afresh (the core
allows for that).

Each look asks Kafka twice: the last stable offsets of the app's changelog and sink
partitions in one ListOffsets call (the changelogs' are the ends every look reads
anyway, so this is that call with the sinks added) and their high watermarks in one
more. A changelog that does not answer fails the look as before; a sink that does not
answer only leaves the watch unread this look.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import IsolationLevel

from segue.operator.observe import KafkaObserveError, KafkaView
from segue.operator.scaling.hanging import watch
from segue.operator.scaling.model import Stall

log = logging.getLogger("segue.operator.observe")

Partition = tuple[str, int]


class TransactionWatch:
    """Per app (by uid): when the watch began and the stalls of its last look."""

    def __init__(self) -> None:
        self._apps: dict[str, tuple[float, dict[Partition, Stall]]] = {}

    def look(
        self,
        uid: str,
        view: KafkaView,
        changelogs: Mapping[str, int],
        sinks: Mapping[str, int],
        now: float,
    ) -> tuple[dict[Partition, int], dict[Partition, Stall] | None, float | None]:
        """The changelogs' last stable offsets (as ``KafkaView.end_offsets``), this
        look's stalls (None: not read) and when the watch began."""
        both = {**sinks, **changelogs}
        stable, failed = view.offsets_answered(both, "latest", IsolationLevel.READ_COMMITTED, "end")
        lost = [f"{t}[{p}]: {why}" for (t, p), why in failed.items() if t in changelogs]
        if lost:
            raise KafkaObserveError("end offsets unavailable: " + "; ".join(lost))
        ends = {tp: o for tp, o in stable.items() if tp[0] in changelogs}
        started, before = self._apps.get(uid, (now, {}))
        if failed:
            log.info("held-partition watch skipped this look: %s", failed)
            return ends, None, started
        try:
            high = view.log_end_offsets(both)
        except KafkaObserveError as exc:
            log.info("held-partition watch skipped this look: %s", exc)
            return ends, None, started
        pairs = {tp: (o, high[tp]) for tp, o in stable.items() if tp in high}
        stalls = watch(before, pairs, now)
        self._apps[uid] = (started, stalls)
        return ends, stalls, started

    def forget(self, uid: str) -> None:
        self._apps.pop(uid, None)
