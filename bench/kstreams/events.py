"""What a Kafka Streams instance of ``java/`` reports, parsed, and what follows from it.

``WordCountInstance.java`` prints one JSON object a line on stdout: ``tasks`` whenever its
state or task sets change, ``restored`` for every batch of changelog records loaded into a
restoring active task or a standby (a KIP-441 warmup is a standby). Its stderr carries the
assignor's log; :func:`assignor_verdict` reads the one line per rebalance that says whether
the leader will probe again. Pure: ``kstreams_side`` feeds lines in, ``run`` reads results;
:func:`read_log` reads a pod's log file, where both streams meet (``plugin_side``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

STABLE = "Finished stable assignment of tasks, no followup rebalances required"
STATEFUL = "1_"  # WordCount's counting sub-topology: its tasks hold the counts store
UNSTABLE = "Finished unstable assignment of tasks, a followup rebalance will be scheduled"


class TaskEvent(BaseModel):
    """The instance's tasks at ``t`` (Unix ms): ``1_*`` are the stateful counting tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event: Literal["tasks"]
    t: int
    state: str
    active: tuple[str, ...]
    standby: tuple[str, ...]

    @property
    def stateful_active(self) -> int:
        return sum(1 for task in self.active if task.startswith(STATEFUL))


class RestoreEvent(BaseModel):
    """``records`` changelog records of ``partition`` loaded at ``t`` (Unix ms)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event: Literal["restored"]
    t: int
    kind: Literal["active", "standby"]
    partition: int
    records: int


class BadLine(ValueError):
    """A stdout line of the Java instance that is not one of its events."""


def parse_line(line: str) -> TaskEvent | RestoreEvent:
    """One stdout line -> its event; :class:`BadLine` quoting the line otherwise."""
    try:
        doc = json.loads(line)
        if not isinstance(doc, dict):
            raise BadLine(f"not a JSON object: {line[:200]!r}")
        if doc.get("event") == "tasks":
            return TaskEvent.model_validate(doc)
        if doc.get("event") == "restored":
            return RestoreEvent.model_validate(doc)
    except (json.JSONDecodeError, ValidationError) as exc:
        raise BadLine(f"not an instance event: {line[:200]!r}: {exc}") from exc
    raise BadLine(f"unknown event: {line[:200]!r}")


def assignor_verdict(line: str) -> bool | None:
    """True for the leader's "no followup rebalances" line, False for "a followup rebalance
    will be scheduled" (a probing or a cooperative followup), None for any other line."""
    if STABLE in line:
        return True
    if UNSTABLE in line:
        return False
    return None


def last_change(events: list[TaskEvent]) -> float | None:
    """Unix seconds when the instance's active set last changed (its first report when it
    never did); None without reports."""
    if not events:
        return None
    changed = events[0]
    for before, after in itertools.pairwise(events):
        if after.active != before.active:
            changed = after
    return changed.t / 1000


def peak_stateful(events: list[TaskEvent], since: float) -> int:
    """The most stateful active tasks the instance ran from ``since`` (Unix s) on,
    counting what it held at ``since``."""
    held = [e.stateful_active for e in events if e.t / 1000 >= since]
    before = [e for e in events if e.t / 1000 < since]
    if before:
        held.append(before[-1].stateful_active)
    return max(held, default=0)


def held(events: list[TaskEvent], since: float) -> set[str]:
    """The tasks the instance held a copy of (active or standby) just before ``since``."""
    before = [e for e in events if e.t / 1000 < since]
    return set(before[-1].active) | set(before[-1].standby) if before else set()


def restored_records(
    events: list[RestoreEvent],
    since: float,
    old: Collection[str] = (),
) -> dict[int, int]:
    """Changelog records loaded per partition (= per counting task) from ``since`` on, into
    copies the instance did not hold then (``old``: what it held; a standby following the
    changelog's tail on a copy it kept is not a restore)."""
    out: dict[int, int] = {}
    for e in events:
        if e.t / 1000 >= since and f"{STATEFUL}{e.partition}" not in old:
            out[e.partition] = out.get(e.partition, 0) + e.records
    return out


FALLBACK = "StickyTaskAssignor places"  # the plugin's line when Kafka Streams' assignor places


@dataclass(frozen=True)
class PodLog:
    """What one instance printed, read back from a file that mixes its stdout (events) with
    its stderr (the JVM's and Kafka's log): the Kafka Streams + Segue side's pods."""

    tasks: list[TaskEvent]
    restores: list[RestoreEvent]
    fallbacks: list[str]  # the plugin's lines saying Kafka Streams' own assignor placed
    errors: list[str]  # ERROR lines and exceptions, as ``kstreams_side`` collects them


def read_log(text: str) -> PodLog:
    """Events from the lines that start as one (``{"event":``), others kept by kind; an
    event line that does not parse is an error, quoted, not skipped."""
    tasks: list[TaskEvent] = []
    restores: list[RestoreEvent] = []
    fallbacks: list[str] = []
    errors: list[str] = []
    for line in text.splitlines():
        if line.startswith('{"event":'):
            try:
                event = parse_line(line)
            except BadLine as exc:
                errors.append(str(exc))
                continue
            (tasks if isinstance(event, TaskEvent) else restores).append(event)  # type: ignore[arg-type]
        elif FALLBACK in line:
            fallbacks.append(line.strip())
        elif is_error(line):
            errors.append(line.strip())
    return PodLog(tasks, restores, fallbacks, errors)


def is_error(line: str) -> bool:
    """An ERROR line or an exception's, not an INFO line that names one (the group
    coordinator's "rebalance failed due to ... (RebalanceInProgressException)")."""
    return " ERROR " in line or ("Exception" in line and " INFO " not in line)
