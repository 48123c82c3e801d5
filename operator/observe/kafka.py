"""What Kafka says: topic sizes, the changelogs' last stable offsets, and for the
autoscaling signal the inputs' log ends and the app's committed offsets.

The operator's own reading of the broker, independent of what workers report
(``metrics``): a member's lag on a task is this module's read_committed end
offset of each changelog partition minus that member's restored or checkpointed
offset, so a worker that is slow to report looks behind, never ahead
(docs/protocol.md, "Operator side"). Partition counts tell the decision layer how
many tasks a sub-topology has and whether its sources grew.

One :class:`KafkaView` wraps one ``AdminClient`` for the operator's lifetime
(librdkafka keeps its connections and metadata warm). Every failure raises
:class:`KafkaObserveError` naming the topic or partition; the caller decides what a
missing answer means. One thing is retried here, as Kafka's Java admin client does: a
partition whose broker says it is not (or not yet) the leader is asked again for up to
:data:`LEADER_WAIT` seconds, the moment a new partition's leader takes to be known.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._listoffsets import OffsetSpec  # not re-exported for mypy

from segue.operator.observe.metadata import MetadataUnavailable, SharedMetadata
from segue.operator.scaling import Replication

COORDINATOR_MOVING = (
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
)


# Answers that only mean "ask the partition's new leader": a partition just created or
# just moved. Asked again (librdkafka has refreshed its metadata by then) until LEADER_WAIT.
LEADER_MOVING = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
LEADER_WAIT = 2.0  # seconds; a broker that lost its leaderships for longer is said
LEADER_RETRY = 0.1  # seconds between asks


class KafkaObserveError(Exception):
    """The broker did not answer, or answered with an error for the named topic."""


class KafkaView:
    """Read-only questions to Kafka, through one reused ``AdminClient``.

    ``extra`` holds librdkafka settings added to ``bootstrap.servers`` (security
    settings from a Secret, ``client.id``, ...); ``timeout`` bounds each call, in
    seconds."""

    def __init__(
        self, bootstrap_servers: str, extra: Mapping[str, str] | None = None, timeout: float = 10.0
    ) -> None:
        self.timeout = timeout
        self._client_error = ""  # the last connection-level error (a refused login, ...)
        try:
            config: dict[str, Any] = {
                **dict(extra or {}),
                "bootstrap.servers": bootstrap_servers,
                "error_cb": _weakly(self._on_error),
            }
            self._config = config
            self._readers: dict[str, Consumer] = {}
            self._lock = threading.Lock()
            self._admin: AdminClient | None = AdminClient(config)
            self._metadata = SharedMetadata(
                lambda: self.admin.list_topics(timeout=self.timeout), self._explain
            )
        except KafkaException as exc:
            raise KafkaObserveError(
                f"admin client for {bootstrap_servers}: {_reason(exc)}"
            ) from exc

    def __enter__(self) -> KafkaView:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _on_error(self, error: KafkaError) -> None:
        self._client_error = str(error.str())

    def _failed(self, what: str, exc: KafkaException) -> KafkaObserveError:
        return KafkaObserveError(f"{what}: {self._explain(exc)}")

    def _explain(self, exc: KafkaException) -> str:
        """Why, with the client's own last complaint: a metadata timeout says only
        "transport failure" where the log says the broker refused our credentials."""
        self.admin.poll(0)  # serve pending error callbacks
        why = _reason(exc)
        if self._client_error and self._client_error not in why:
            why += f" ({self._client_error})"
        self._client_error = ""
        return why

    def close(self) -> None:
        """Release the clients (librdkafka closes the admin once no call is in flight)."""
        self._admin = None
        self._metadata.forget()
        readers, self._readers = self._readers, {}
        for reader in readers.values():
            reader.close()

    def _group_reader(self, group: str) -> Consumer:
        """A consumer of ``group`` that never subscribes, so it never joins the group: it
        only asks the group's coordinator for committed offsets. Not the AdminClient's
        ListConsumerGroupOffsets: librdkafka 2.x can crash the whole process (a segfault
        in its main thread) answering that for a group whose coordinator is not ready yet,
        as for a new app (confluent-kafka-python#1982); a consumer has the group state
        that code path lacks."""
        with self._lock:  # one view may serve several apps' threads
            reader = self._readers.get(group)
            if reader is None:
                reader = self._readers[group] = Consumer(
                    {
                        **self._config,
                        "group.id": group,
                        "enable.auto.commit": False,
                        "isolation.level": "read_uncommitted",
                    }
                )
            return reader

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            raise KafkaObserveError("KafkaView is closed")
        return self._admin

    def partitions(self, topics: Iterable[str]) -> dict[str, int]:
        """Partition counts of those of ``topics`` that exist; missing ones are absent."""
        return self.layout(topics)[0]

    def layout(
        self, topics: Iterable[str], also: Iterable[str] = ()
    ) -> tuple[dict[str, int], Replication]:
        """Partition counts of those of ``topics`` that exist (missing ones are absent),
        and how their partitions are replicated: the brokers up, each partition's
        replicas out of its ISR, the partitions without a leader. Topics in ``also``
        are counted too (one in error is left out) but not in the replication.

        From one metadata read of the whole cluster, shared with the view's other apps
        for a second (:mod:`.metadata`). A topic the broker reports with an error other
        than "unknown" (e.g. still being created) raises."""
        wanted, also = set(topics), set(also) - set(topics)
        try:
            metadata = self._metadata.get(wanted)
        except MetadataUnavailable as exc:
            raise KafkaObserveError(f"metadata for {sorted(wanted)}: {exc}") from exc
        counts: dict[str, int] = {}
        lagging: dict[tuple[str, int], tuple[int, ...]] = {}
        offline: list[tuple[str, int]] = []
        for name in sorted(wanted | also):
            topic = metadata.topics.get(name)
            if topic is None:
                continue
            if topic.error is not None:
                if topic.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART or name in also:
                    continue
                raise KafkaObserveError(f"topic {name}: {topic.error}")
            counts[name] = len(topic.partitions)
            for p in topic.partitions.values() if name in wanted else ():
                if p.leader < 0:
                    offline.append((name, p.id))
                elif out := tuple(sorted(set(p.replicas) - set(p.isrs))):
                    lagging[(name, p.id)] = out
        seen = Replication(
            brokers=tuple(sorted(metadata.brokers)),
            partitions=sum(n for t, n in counts.items() if t in wanted),
            under_replicated=lagging,
            offline=tuple(offline),
        )
        return counts, seen

    def topic_exists(self, topic: str) -> bool:
        return topic in self.partitions([topic])

    def end_offsets(self, partitions: Mapping[str, int]) -> dict[tuple[str, int], int]:
        """The last stable offset (read_committed latest) of partitions ``0..n-1`` of
        each ``topic: n``, in one ListOffsets call. An open transaction holds it back:
        records after the LSO are not counted until they commit. Any partition without
        an answer raises, all of them named: a missing one, or one whose leader the
        client does not know yet (for a moment after partitions are added)."""
        return self._list_offsets(partitions, "latest", IsolationLevel.READ_COMMITTED, "end")

    def log_end_offsets(self, partitions: Mapping[str, int]) -> dict[tuple[str, int], int]:
        """The high watermark (read_uncommitted latest): every record written, committed
        or not, as an input's producers see it. The autoscaling signal's log end."""
        return self._list_offsets(partitions, "latest", IsolationLevel.READ_UNCOMMITTED, "log-end")

    def log_start_offsets(self, partitions: Mapping[str, int]) -> dict[tuple[str, int], int]:
        """The earliest offset still in each partition (retention moves it)."""
        return self._list_offsets(
            partitions, "earliest", IsolationLevel.READ_UNCOMMITTED, "log-start"
        )

    def committed_offsets(
        self, group: str, partitions: Mapping[str, int]
    ) -> dict[tuple[str, int], int]:
        """The offsets ``group`` committed on partitions ``0..n-1`` of each ``topic: n``
        (a Segue app commits its input offsets in each task's transaction under group id
        = application id). Partitions it never committed are absent. Offsets of an open
        transaction are not counted (``require_stable`` off: the last committed ones)."""
        wanted = [TopicPartition(t, p) for t, n in sorted(partitions.items()) for p in range(n)]
        if not wanted:
            return {}
        reader, deadline = self._group_reader(group), time.monotonic() + self.timeout
        while True:
            try:
                answer = reader.committed(wanted, timeout=self.timeout)
                break
            except KafkaException as exc:
                # a new group's coordinator takes a moment to be found or to load
                moving = exc.args[0].code() in COORDINATOR_MOVING
                if not moving or time.monotonic() > deadline:
                    raise self._failed(f"committed offsets of group {group}", exc) from exc
                time.sleep(0.2)
        out: dict[tuple[str, int], int] = {}
        failed: list[str] = []
        for tp in answer:
            if tp.error is not None:
                failed.append(f"{tp.topic}[{tp.partition}]: {tp.error.str()}")
            elif tp.offset >= 0:
                out[(tp.topic, tp.partition)] = int(tp.offset)
        if failed:
            raise KafkaObserveError(f"committed offsets of group {group}: " + "; ".join(failed))
        return out

    def _list_offsets(
        self, partitions: Mapping[str, int], which: str, isolation: IsolationLevel, label: str
    ) -> dict[tuple[str, int], int]:
        out, failed = self.offsets_answered(partitions, which, isolation, label)
        if failed:
            raise KafkaObserveError(
                f"{label} offsets unavailable: "
                + "; ".join(f"{t}[{p}]: {why}" for (t, p), why in failed.items())
            )
        return out

    def offsets_answered(
        self, partitions: Mapping[str, int], which: str, isolation: IsolationLevel, label: str
    ) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], str]]:
        """ListOffsets (``which``: ``latest`` or ``earliest``): the offsets of the
        partitions that answered, and why each other one did not. A partition whose
        leader is moving is asked again until it answers or :data:`LEADER_WAIT` passes.
        Raises only if a call as a whole fails."""
        wanted = [(topic, p) for topic, n in partitions.items() for p in range(n)]
        out: dict[tuple[str, int], int] = {}
        failed: dict[tuple[str, int], str] = {}
        deadline = time.monotonic() + min(LEADER_WAIT, self.timeout)
        while wanted:
            answered, refused, moving = self._ask(wanted, which, isolation, label)
            out.update(answered)
            for where in answered:
                failed.pop(where, None)
            failed.update(refused)
            if not moving or time.monotonic() + LEADER_RETRY > deadline:
                break
            time.sleep(LEADER_RETRY)
            wanted = moving
        return out, failed

    def _ask(
        self, wanted: list[tuple[str, int]], which: str, isolation: IsolationLevel, label: str
    ) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], str], list[tuple[str, int]]]:
        """One ListOffsets call for ``wanted``: the offsets answered, why each other
        partition was refused, and which of those have a leader moving (to ask again)."""
        spec: Any = getattr(OffsetSpec, which)  # untyped in confluent-kafka's stubs
        request = {TopicPartition(topic, p): spec() for topic, p in wanted}
        try:
            futures = self.admin.list_offsets(
                request, isolation_level=isolation, request_timeout=self.timeout
            )
        except KafkaException as exc:
            asked = sorted({t for t, _ in wanted})
            raise self._failed(f"{label} offsets of {asked}", exc) from exc
        out: dict[tuple[str, int], int] = {}
        failed: dict[tuple[str, int], str] = {}
        moving: list[tuple[str, int]] = []
        for tp, future in sorted(futures.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
            where = (tp.topic, tp.partition)
            try:
                out[where] = int(future.result(timeout=self.timeout).offset)
            except KafkaException as exc:
                failed[where] = _reason(exc)
                error = exc.args[0] if exc.args else None
                if isinstance(error, KafkaError) and error.code() in LEADER_MOVING:
                    moving.append(where)
            except TimeoutError:
                failed[where] = f"no answer in {self.timeout}s"
        return out, failed, moving


def _weakly(method: Callable[[KafkaError], None]) -> Callable[[KafkaError], None]:
    """A client callback that does not keep the view alive. Bound, it made a cycle
    (view -> client -> callback -> view) that only the cyclic collector frees, on
    whatever thread runs it; on one of librdkafka's own the process aborts
    ("rd_kafka_destroy() called from librdkafka owned thread": a test run, 2026-11-27)."""
    ref = weakref.WeakMethod(method)

    def call(error: KafkaError) -> None:
        bound = ref()
        if bound is not None:
            bound(error)

    return call


def _reason(exc: KafkaException) -> str:
    error = exc.args[0] if exc.args else None
    return str(error.str()) if isinstance(error, KafkaError) else str(exc)
