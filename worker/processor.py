"""What a processor sees: the record, the task's context, and the error policy.

A processor is a plain function ``process(record, ctx)`` called once per input
record of its task (``active`` drives it). Through ``ctx`` it reads and writes the
task's stores (``state.store``) and sends records to the sub-topology's sinks.
Everything it does for one record commits together with the input offset, in the
task's Kafka transaction, or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

# What happens to a record that cannot be decoded or makes the processor raise:
# "stop"        stop the task with a clear error (the default; nothing is skipped);
# "skip"        log it, count it in segue_records_skipped_total and go on;
# "dead_letter" write its raw bytes to the "<application>-dead-letter" topic, in the
#               same transaction, count it, and go on.
ErrorPolicy = Literal["stop", "skip", "dead_letter"]
ERROR_POLICIES: tuple[ErrorPolicy, ...] = ("stop", "skip", "dead_letter")


@dataclass(frozen=True, slots=True)
class Record:
    key: Any
    value: Any
    timestamp: int  # milliseconds since the epoch, the Kafka record's timestamp
    topic: str
    partition: int
    offset: int
    headers: tuple[tuple[str, bytes], ...] = ()


class KeyValueStore(Protocol):
    """A task's view of one of its stores. Reads see the task's own uncommitted writes."""

    def get(self, key: Any) -> Any | None: ...

    def put(self, key: Any, value: Any) -> None: ...

    def delete(self, key: Any) -> None: ...

    def range(self, start: Any, end: Any) -> Iterator[tuple[Any, Any]]:
        """Entries with ``start <= key < end`` in the byte order of the serialized keys."""
        ...


class Context(Protocol):
    @property
    def task_id(self) -> str: ...

    @property
    def member(self) -> str:
        """The worker's member id (its pod name)."""
        ...

    def store(self, name: str) -> KeyValueStore: ...

    def send(
        self,
        sink: str,
        key: Any,
        value: Any,
        *,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> None:
        """Send a record to the sink named ``sink`` (a topic or repartition name)."""
        ...


Processor = Callable[[Record, Context], None]
