"""A long-lived consumer, replaced in place once librdkafka has dropped every broker.

A KRaft broker that restarts serves requests a moment before its controller unfences
it, and a Metadata answer in that moment lists every topic and no broker. librdkafka
takes it as the cluster's broker list: it decommissions every broker it knew and, the
answer having parsed, stops its re-bootstrap timer, so it never connects again
(confluentinc/librdkafka#5301). Fresh clients of the same process connect at once. On
a single broker, the input consumer a worker holds for its whole life was left that
way: every fence of its tasks failed on it ("Failed to get metadata: Local: Broker
transport failure") until the pod was restarted.

So each long-lived consumer reports librdkafka's statistics every
:data:`STATS_INTERVAL_MS`; one whose broker list has held no broker but the logical
coordinator handle for :data:`LOST_AFTER` seconds (:func:`cluster_lost`) is replaced by
a new client: the same partitions at the same positions, the same ones paused. A
fence that finds no broker on the input consumer while the batch's fresh producers
just reached the cluster renews it at once (:func:`renew_stranded`), the statistics
being served only by the loop's polls. Holders
keep the :class:`Renewing` object, which forwards every call to its current client; the
old client is closed off the loop. The worker counts each renewal
(``segue_kafka_clients_renewed``) and says it in its log.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from segue.worker.closing import close_later
from segue.worker.kafka import CLOSE_TIMEOUT

log = logging.getLogger(__name__)

STATS_INTERVAL_MS = 1000
LOST_AFTER = 2.0  # seconds with no broker: two statistics in a row, never a blip
HANDLES = frozenset({"logical", "internal"})  # librdkafka's own, not brokers to connect to


def cluster_lost(stats: dict[str, Any]) -> bool:
    """True if librdkafka's statistics name no broker it could connect to (an entry
    of a source this module does not know counts as one it could)."""
    brokers = stats.get("brokers") or {}
    return all(b.get("source") in HANDLES for b in brokers.values())


def no_usable_broker(exc: KafkaException) -> bool:
    """A call that found no broker up within its timeout (librdkafka's ``_TRANSPORT``
    for a metadata call: "Failed to get metadata: Local: Broker transport failure")."""
    error = exc.args[0] if exc.args else None
    return isinstance(error, KafkaError) and error.code() == KafkaError._TRANSPORT


def renew_stranded(client: object, why: str) -> bool:
    """Renew ``client`` if it is a :class:`Renewing` (a caller that has just seen other
    clients reach the cluster, and this one find no broker); False otherwise."""
    if not isinstance(client, Renewing):
        return False
    client.renew(why)
    return True


class Renewing:
    """A :class:`Consumer` (every call forwarded) that :meth:`renew_if_lost` replaces."""

    def __init__(
        self,
        name: str,
        config: dict[str, Any],
        *,
        make: Callable[[dict[str, Any]], Consumer] = Consumer,
        renewed: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        self._config = dict(config)
        self._make = make
        self._renewed = renewed
        self._lock = threading.Lock()
        self._paused: set[tuple[str, int]] = set()
        self._starts: dict[tuple[str, int], int] = {}  # where each partition was assigned
        self._lost_since: float | None = None
        self._generation = 0
        self.statistics = 0  # statistics reports read from the current client
        self._client = self._new()

    def _new(self) -> Consumer:
        generation = self._generation

        def stats(text: str) -> None:
            lost = cluster_lost(json.loads(text))
            with self._lock:
                if generation != self._generation:
                    return  # the old client's last words
                self.statistics += 1
                if not lost:
                    self._lost_since = None
                elif self._lost_since is None:
                    self._lost_since = time.monotonic()
                    log.warning("%s consumer: librdkafka knows no broker any more", self.name)

        return self._make({**self._config, "statistics.interval.ms": STATS_INTERVAL_MS,
                           "stats_cb": stats})  # fmt: skip

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "_client":  # not made yet: never recurse
            raise AttributeError(attribute)
        return getattr(self._client, attribute)

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._client.incremental_assign(partitions)
        self._starts.update({(p.topic, p.partition): p.offset for p in partitions})

    def pause(self, partitions: list[TopicPartition]) -> None:
        self._client.pause(partitions)
        self._paused.update((p.topic, p.partition) for p in partitions)

    def resume(self, partitions: list[TopicPartition]) -> None:
        self._client.resume(partitions)
        self._paused.difference_update((p.topic, p.partition) for p in partitions)

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._client.incremental_unassign(partitions)
        for p in partitions:
            self._paused.discard((p.topic, p.partition))
            self._starts.pop((p.topic, p.partition), None)

    def lost_for(self) -> float | None:
        """Seconds since the statistics last named a broker, if they do not now."""
        with self._lock:
            since = self._lost_since
        return None if since is None else time.monotonic() - since

    def renew_if_lost(self) -> bool:
        """Replace the client if it has known no broker for :data:`LOST_AFTER` s."""
        lost = self.lost_for()
        if lost is None or lost < LOST_AFTER:
            return False
        self.renew(f"librdkafka has known no broker for {lost:.1f}s")
        return True

    def renew(self, why: str) -> None:
        """A new client in the old one's place: its assignment at the positions the
        application reached (the next record to return; where it was assigned if none
        was returned yet), its pauses; the old one closed."""
        old = self._client
        assigned = old.assignment()
        positions = [
            # nothing returned from it yet: where it was assigned
            p if p.offset >= 0 else TopicPartition(p.topic, p.partition, self._starts.get(
                (p.topic, p.partition), p.offset))
            for p in (old.position(assigned) if assigned else [])
        ]  # fmt: skip
        with self._lock:
            self._generation += 1
            self._lost_since = None
        new = self._new()
        if positions:
            new.incremental_assign(positions)
        paused = [TopicPartition(t, p) for t, p in sorted(self._paused)]
        if paused:
            new.pause(paused)
        self._client = new
        log.warning(
            "%s consumer replaced (%s): %d partition(s) carried over at their positions",
            self.name, why, len(positions),
        )  # fmt: skip
        close_later(f"the replaced {self.name} consumer", old.close, CLOSE_TIMEOUT)
        if self._renewed is not None:
            self._renewed(self.name)
