"""One cluster metadata read shared by every app a :class:`~.kafka.KafkaView` serves.

A metadata request answers for the whole cluster, so with one request per app per
look, an operator of N apps on one cluster read N x (all of their topics) per
interval: at 100 apps that was a third of its CPU (docs/benchmarks.md, "One operator
for a fleet"). Here a read younger than :data:`FRESH` that knows every topic asked
about answers everyone; a topic it lacks (just created?) forces a new read, so a new
app never waits on a stale answer. A failed read is shared as well, for the same
time, so while the brokers are gone the apps' threads do not queue up behind one
another's timeouts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from confluent_kafka import KafkaException

FRESH = 1.0  # seconds a read (or its failure) answers for every app


class MetadataUnavailable(Exception):
    """The read failed; the message says why, as the view explained it when it did."""


class SharedMetadata:
    """``read()`` is ``AdminClient.list_topics``; one runs at a time. ``explain`` says why
    a read failed, once, when it does (the client's complaint is consumed then)."""

    def __init__(
        self, read: Callable[[], Any], explain: Callable[[KafkaException], str] = str
    ) -> None:
        self._read = read
        self._explain = explain
        self._lock = threading.Lock()
        self._at = -FRESH
        self._metadata: Any = None
        self._failure: MetadataUnavailable | None = None

    def forget(self) -> None:
        """Answer nothing from what was read before (the view closed)."""
        with self._lock:
            self._at, self._metadata, self._failure = -FRESH, None, None

    def get(self, topics: Collection[str]) -> Any:
        """Cluster metadata that knows ``topics`` (or as fresh as it gets); raises
        :class:`MetadataUnavailable`."""
        with self._lock:
            if time.monotonic() - self._at < FRESH:
                if self._failure is not None:
                    raise MetadataUnavailable(str(self._failure))  # a fresh traceback
                if all(t in self._metadata.topics for t in topics):
                    return self._metadata
            try:
                self._metadata, self._failure = self._read(), None
            except KafkaException as exc:
                self._metadata, self._failure = None, MetadataUnavailable(self._explain(exc))
                raise self._failure from exc
            finally:
                self._at = time.monotonic()
            return self._metadata
