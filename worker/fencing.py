"""Starting active tasks as one batch: fence, measure, find where to resume.

A handover's pause is mostly broker round trips, so ``taskset`` starts every
active task of a generation together: each task's previous owner is fenced with
its own producer's ``init_transactions`` (in parallel threads: librdkafka
releases the GIL), then the changelog end offsets are measured (the restore
target: after the fence the old owner's open transaction is aborted), and one
``committed()`` call reads where every task resumes its input, under the
application's group. Offsets read after the fence are stable: nobody else can
commit for these tasks any more; a task whose changelog still has an open
transaction then is held by one nobody will end, and is refused (``hanging``).
Clients' metadata for the topics involved is
refreshed first, so a first assignment does not wait for librdkafka's periodic
topic scan (up to a second).

The same module commits the open transactions of tasks being revoked, in
parallel, so the old owner is done before the new owner's fence arrives.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer

from segue.worker.closing import close_later
from segue.worker.hanging import Highs, changelogs_held
from segue.worker.kafka import CLOSE_TIMEOUT, committed_offsets
from segue.worker.renewing import no_usable_broker, renew_stranded
from segue.worker.trace import phase
from segue.worker.watchdog import bounded

log = logging.getLogger(__name__)

INIT_TIMEOUT = 30.0
MAX_THREADS = 16


@dataclass(frozen=True)
class Fenced:
    """What fencing a task's previous owner found out."""

    producer: Producer
    ends: dict[str, int]  # store -> changelog last stable offset
    offsets: dict[tuple[str, int], int]  # input partition -> where to resume


@dataclass(frozen=True)
class Starting:
    """One task to fence: its name, a producer if one is warm, its stores'
    changelog partitions, its input partitions and the topics it writes."""

    name: str
    producer: Producer | None
    changelogs: dict[str, tuple[str, int]]  # store -> (topic, partition)
    inputs: list[tuple[str, int]]
    sinks: list[str]


Watermarks = Callable[[str, int], tuple[int, int]]


def warm_metadata(client: Any, topics: Sequence[str], timeout: float = 10.0) -> None:
    """Refresh ``client``'s metadata for ``topics`` (one request per topic)."""
    for topic in sorted(set(topics)):
        with bounded("list_topics", timeout):
            client.list_topics(topic, timeout=timeout)


def fence_all(
    starting: list[Starting],
    *,
    factory: Callable[[str], Producer],
    exactly_once: bool,
    watermarks: Watermarks,
    consumer: Consumer,
    highs: Highs | None = None,
) -> list[Fenced | BaseException]:
    if not starting:
        return []

    def fence(item: Starting) -> tuple[Producer, dict[str, int]] | BaseException:
        producer = item.producer
        try:
            if producer is None:
                producer = factory(item.name)
            began = time.monotonic()
            # Metadata first: it brings a broker connection up, so the transaction
            # coordinator lookup inside init_transactions() goes out at once instead
            # of waiting for librdkafka's 500 ms coordinator-query retry timer.
            warm_metadata(producer, [t for t, _ in item.changelogs.values()] + item.sinks)
            metadata = time.monotonic() - began
            if exactly_once:
                with bounded("init_transactions", INIT_TIMEOUT):
                    producer.init_transactions(INIT_TIMEOUT)  # fences the previous owner
            took = time.monotonic() - began
            phase(item.name, "fenced", f"seconds={took:.3f} metadata={metadata:.3f}")
            ends = {store: watermarks(t, p)[1] for store, (t, p) in item.changelogs.items()}
            return producer, ends
        except KafkaException as exc:
            if producer is not None:
                close(producer, item.name)
            return exc

    with ThreadPoolExecutor(max_workers=min(MAX_THREADS, len(starting))) as pool:
        fenced = list(pool.map(fence, starting))
    if exactly_once and highs is not None:
        fenced = _refuse_held(starting, fenced, highs)
    producers = [
        (f[0], item.name)
        for item, f in zip(starting, fenced, strict=True)
        if not isinstance(f, BaseException)
    ]
    offsets: dict[tuple[str, int], int] = {}
    try:
        partitions = [
            tp
            for item, f in zip(starting, fenced, strict=True)
            if not isinstance(f, BaseException)
            for tp in item.inputs
        ]
        if partitions:
            topics = [t for t, _ in partitions]
            try:
                warm_metadata(consumer, topics)
            except KafkaException as exc:
                # this batch's fresh producers just reached the cluster (renewing)
                stranded = producers and no_usable_broker(exc)
                if not (stranded and renew_stranded(consumer, "no broker in a fence")):
                    raise
                warm_metadata(consumer, topics)
            offsets = committed_offsets(consumer, partitions)
    except KafkaException as exc:
        for producer, name in producers:
            close(producer, name)
        return [exc for _ in starting]
    out: list[Fenced | BaseException] = []
    for item, f in zip(starting, fenced, strict=True):
        if isinstance(f, BaseException):
            out.append(f)
        else:
            producer, ends = f
            out.append(Fenced(producer, ends, {k: offsets[k] for k in item.inputs if k in offsets}))
    return out


def _refuse_held(
    starting: list[Starting],
    fenced: list[tuple[Producer, dict[str, int]] | BaseException],
    highs: Highs,
) -> list[tuple[Producer, dict[str, int]] | BaseException]:
    """``fenced`` with the tasks a hanging transaction holds (``hanging``) failed,
    their producers closed."""
    held = changelogs_held(
        [
            (item.name, item.changelogs, f[1])
            for item, f in zip(starting, fenced, strict=True)
            if not isinstance(f, BaseException)
        ],
        highs,
    )
    out: list[tuple[Producer, dict[str, int]] | BaseException] = []
    for item, f in zip(starting, fenced, strict=True):
        if item.name in held and not isinstance(f, BaseException):
            log.error("%s", held[item.name])
            close(f[0], item.name)
            out.append(held[item.name])
        else:
            out.append(f)
    return out


def close(producer: Producer, task: str) -> None:
    """Close a producer its task will not use (off the loop: ``closing``)."""
    close_later(f"task {task}", producer.close, CLOSE_TIMEOUT)


def in_parallel(calls: list[Callable[[], None]]) -> list[BaseException | None]:
    """Run ``calls`` concurrently; each one's exception (or None) in order."""

    def run(call: Callable[[], None]) -> BaseException | None:
        try:
            call()
        except Exception as exc:
            return exc
        return None

    if len(calls) <= 1:
        return [run(c) for c in calls]
    with ThreadPoolExecutor(max_workers=min(MAX_THREADS, len(calls))) as pool:
        return list(pool.map(run, calls))
