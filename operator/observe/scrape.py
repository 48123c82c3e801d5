"""What one worker says about itself: its ``/metrics`` page, parsed into plain data.

The worker's side of this contract is ``segue.worker.metrics`` (the metric table
in docs/protocol.md). :func:`parse_worker_metrics` is pure: text in, a frozen
:class:`WorkerReport` out, so the decision layer can be tested on literal pages.
:func:`scrape` is the only I/O here: one HTTP GET, and every way it can fail
(refused, timed out, HTTP error, a page that does not parse) becomes one
:class:`ScrapeError` naming the pod's address, so the caller treats an unreachable
pod and a garbled one alike. ``topology`` reuses :func:`http_get` for
``/topology``. Nothing here judges what the numbers mean: lag against the
changelog's real end is the decision layer's arithmetic, with ``kafka``'s offsets.
"""

from __future__ import annotations

import http.client
import math
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from segue.protocol import reports as r
from segue.protocol.names import METRICS_PATH


class ScrapeError(Exception):
    """A worker endpoint could not be read; the message starts with ``host:port``."""


@dataclass(frozen=True)
class WorkerReport:
    """One scrape. Tasks are assignor ids (``"0_1"``); stores are store names."""

    generation: int | None = None  # segue_assignment_generation; None before the first
    roles: dict[str, str] = field(default_factory=dict)  # task -> active/standby/learning
    restored: dict[str, dict[str, int]] = field(default_factory=dict)  # next offset to read
    local: dict[str, dict[str, int]] = field(default_factory=dict)  # unassigned, on disk
    changelog_end: dict[str, dict[str, int]] = field(default_factory=dict)  # as the worker saw it
    lag: dict[str, int] = field(default_factory=dict)  # the worker's own view, summed over stores
    state_bytes: dict[str, int] = field(default_factory=dict)
    processed: dict[str, int] = field(default_factory=dict)  # records processed as active
    # Summed over a task's stores: the changelog records (and key+value bytes) each store
    # applied since it was created empty (kept in its checkpoint), and the counters of
    # records and bytes restored.
    changelog_records: dict[str, int] = field(default_factory=dict)
    changelog_bytes: dict[str, int] = field(default_factory=dict)
    restored_records: dict[str, int] = field(default_factory=dict)
    restored_bytes: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)  # assignment errors by reason
    states: dict[str, str] = field(default_factory=dict)  # task -> starting/running/failed/...
    task_errors: dict[str, tuple[str, str]] = field(default_factory=dict)  # task -> why not
    ready: bool | None = None  # segue_worker_ready; None if the page lacks it

    def offsets(self) -> dict[str, dict[str, int]]:
        """See :func:`offsets`."""
        return offsets(self)


def offsets(report: WorkerReport) -> dict[str, dict[str, int]]:
    """Per task, the store offsets this member holds: the restored offsets of the
    tasks it runs (a stateless one maps to ``{}``), else the checkpointed offsets
    of state left on its disk."""
    held = {task: dict(report.restored.get(task, {})) for task in report.roles}
    held.update({t: dict(s) for t, s in report.restored.items() if t not in held})
    held.update({t: dict(s) for t, s in report.local.items() if t not in held})
    return held


# sample name -> the labels it must carry
_PROCESSED = f"{r.RECORDS_PROCESSED}_total"
_ERRORS = f"{r.ASSIGNMENT_ERRORS}_total"
_RESTORED = f"{r.RECORDS_RESTORED}_total"
_RESTORED_BYTES = f"{r.BYTES_RESTORED}_total"
# per (task, store), reported per task summed over its stores
_SUMMED = (r.CHANGELOG_RECORDS, r.CHANGELOG_BYTES, _RESTORED, _RESTORED_BYTES)
_LABELS: dict[str, tuple[str, ...]] = {
    r.GENERATION: (),
    r.TASK_ROLE: ("task", "role"),
    r.TASK_STATE: ("task", "state"),
    r.RESTORED_OFFSET: ("task", "store"),
    r.LOCAL_OFFSET: ("task", "store"),
    r.CHANGELOG_END_OFFSET: ("task", "store"),
    **{name: ("task", "store") for name in _SUMMED},
    r.TASK_LAG: ("task",),
    r.STATE_BYTES: ("task",),
    _PROCESSED: ("task",),
    _ERRORS: ("reason",),
    r.READY: (),
    r.TASK_ERROR: ("task", "reason"),  # and a ``message``, which may be empty
}


def parse_worker_metrics(text: str) -> WorkerReport:
    """Parse a worker's ``/metrics`` page. Other metrics are ignored; a known one
    with a missing label or a value that is not a whole number raises ValueError."""
    generation: int | None = None
    ready: bool | None = None
    roles: dict[str, str] = {}
    states: dict[str, str] = {}
    per_store: dict[str, dict[str, dict[str, int]]] = {
        r.RESTORED_OFFSET: {},
        r.LOCAL_OFFSET: {},
        r.CHANGELOG_END_OFFSET: {},
    }
    per_task: dict[str, dict[str, int]] = {r.TASK_LAG: {}, r.STATE_BYTES: {}, _PROCESSED: {}}
    summed: dict[str, dict[str, int]] = {name: {} for name in _SUMMED}
    errors: dict[str, int] = {}
    task_errors: dict[str, tuple[str, str]] = {}
    for sample in samples(text):
        if sample.name not in _LABELS:
            continue
        labels = _labels(sample)
        value = whole(sample)
        if sample.name == r.GENERATION:
            generation = value
        elif sample.name == r.READY:
            ready = value == 1
        elif sample.name == r.TASK_ROLE:
            if value == 1:
                roles[labels[0]] = labels[1]
        elif sample.name == r.TASK_STATE:
            if value == 1:
                states[labels[0]] = labels[1]
        elif sample.name in per_store:
            per_store[sample.name].setdefault(labels[0], {})[labels[1]] = value
        elif sample.name in summed:
            total = summed[sample.name]
            total[labels[0]] = total.get(labels[0], 0) + value
        elif sample.name in per_task:
            per_task[sample.name][labels[0]] = value
        elif sample.name == r.TASK_ERROR:
            if value == 1:
                task_errors[labels[0]] = (labels[1], sample.labels.get("message", ""))
        else:  # assignment errors
            errors[labels[0]] = value
    return WorkerReport(
        generation=generation,
        roles=roles,
        restored=per_store[r.RESTORED_OFFSET],
        local=per_store[r.LOCAL_OFFSET],
        changelog_end=per_store[r.CHANGELOG_END_OFFSET],
        lag=per_task[r.TASK_LAG],
        state_bytes=per_task[r.STATE_BYTES],
        processed=per_task[_PROCESSED],
        changelog_records=summed[r.CHANGELOG_RECORDS],
        changelog_bytes=summed[r.CHANGELOG_BYTES],
        restored_records=summed[_RESTORED],
        restored_bytes=summed[_RESTORED_BYTES],
        errors=errors,
        states=states,
        task_errors=task_errors,
        ready=ready,
    )


def samples(text: str) -> list[Sample]:
    try:
        return [s for family in text_string_to_metric_families(text) for s in family.samples]
    except (TypeError, LookupError, AttributeError) as exc:  # the parser's other ways to fail
        raise ValueError(f"not a Prometheus text page: {exc!r}") from exc


def _labels(sample: Sample) -> tuple[str, ...]:
    wanted = _LABELS[sample.name]
    missing = [name for name in wanted if not sample.labels.get(name)]
    if missing:
        raise ValueError(f"{sample.name}{sample.labels}: missing label(s) {missing}")
    return tuple(sample.labels[name] for name in wanted)


def whole(sample: Sample) -> int:
    value = float(sample.value)
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{sample.name}{sample.labels}: {sample.value} is not a whole number")
    return int(value)


def http_get(host: str, port: int, path: str, timeout: float) -> bytes:
    """The body of a 200 answer to ``GET http://host:port/path``; anything else
    raises :class:`ScrapeError` ``"host:port: reason"``."""
    where = f"{host}:{port}"
    netloc = f"[{host}]:{port}" if ":" in host else where  # an IPv6 pod IP
    try:
        with urllib.request.urlopen(f"http://{netloc}{path}", timeout=timeout) as answer:
            return bytes(answer.read())
    except urllib.error.HTTPError as exc:
        raise ScrapeError(f"{where}: GET {path}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise ScrapeError(f"{where}: GET {path}: {reason}") from exc


def scrape(host: str, port: int, timeout: float = 2.0) -> WorkerReport:
    """Read and parse one worker's ``/metrics``; :class:`ScrapeError` on any failure."""
    body = http_get(host, port, METRICS_PATH, timeout)
    try:
        return parse_worker_metrics(body.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is one too
        raise ScrapeError(f"{host}:{port}: GET /metrics: unreadable page: {exc}") from exc
