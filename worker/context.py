"""The context a processor gets for one task (``processor.Context``).

It hands out the task's stores and collects the records the processor sends,
serialized by each sink's serdes; ``active`` produces them only once the
processor returned, so a record whose processing fails sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from confluent_kafka import Message

from segue.worker.state.store import TaskStore
from segue.worker.topology import TopicSpec


@dataclass(slots=True)
class Outgoing:
    topic: str
    key: bytes | None
    value: bytes | None
    timestamp: int | None
    headers: list[tuple[str, bytes]] | None


def raw_bytes(data: str | bytes | None) -> bytes | None:
    return data.encode() if isinstance(data, str) else data


def headers_of(msg: Message) -> tuple[tuple[str, bytes], ...]:
    raw = msg.headers()
    if not raw:
        return ()
    items = raw.items() if isinstance(raw, dict) else raw
    return tuple((str(k), v if isinstance(v, bytes) else str(v or "").encode()) for k, v in items)


class TaskContext:
    def __init__(
        self,
        task_id: str,
        member: str,
        stores: dict[str, TaskStore],
        sinks: dict[str, TopicSpec],
        application_id: str,
    ) -> None:
        self._task_id = task_id
        self._member = member
        self._stores = stores
        self._sinks = sinks
        self._application_id = application_id
        self.outgoing: list[Outgoing] = []

    @property
    def task_id(self) -> str:
        return self._task_id

    @property
    def member(self) -> str:
        return self._member

    def store(self, name: str) -> TaskStore:
        try:
            return self._stores[name]
        except KeyError:
            raise KeyError(f"task {self._task_id} has no store {name!r}") from None

    def send(
        self,
        sink: str,
        key: Any,
        value: Any,
        *,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> None:
        spec = self._sinks.get(sink)
        if spec is None:
            raise KeyError(f"task {self._task_id} has no sink {sink!r}")
        self.outgoing.append(
            Outgoing(
                spec.topic(self._application_id),
                spec.key.serialize(key),
                spec.value.serialize(value),
                timestamp,
                headers,
            )
        )
