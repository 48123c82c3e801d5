"""A windowed aggregation: count and sum per key in tumbling event-time windows.

Input: key = a string (say, a user), value = a JSON number (say, an amount),
timestamp = the record's event time. Each record updates its window's
``{"count", "sum"}`` in the ``windows`` store and emits the new aggregate,
keyed ``"<key>@<window start ms>"``. Stream time (the largest timestamp seen by
the task) lives in the same store, so it survives restarts and handovers; a
record for a window that closed (end + grace <= stream time) is late: it is
dropped and counted in the store under ``"~late"``. Closed windows are deleted
as stream time passes them, with one range scan per window boundary crossed.
Store keys are ``window start (8 bytes, big-endian) + key``, so expiry is one
range from the beginning.
"""

from __future__ import annotations

import struct

from segue.worker import BYTES, JSON, STRING, Context, ErrorPolicy, Processor, Record, Topology

STREAM_TIME = b"\xff~stream-time"
LATE = b"\xff~late"


def _window_key(start: int, key: str) -> bytes:
    return struct.pack(">q", start) + key.encode()


def aggregate(size_ms: int, grace_ms: int) -> Processor:
    def process(record: Record, ctx: Context) -> None:
        amount = record.value
        if not isinstance(amount, int | float) or isinstance(amount, bool):
            raise ValueError(f"value must be a JSON number, got {amount!r}")
        store = ctx.store("windows")
        previous = store.get(STREAM_TIME) or {"t": -1}
        stream_time = max(previous["t"], record.timestamp)
        start = record.timestamp - record.timestamp % size_ms
        if start + size_ms + grace_ms <= stream_time:
            late = store.get(LATE) or {"n": 0}
            store.put(LATE, {"n": late["n"] + 1})
            return
        if stream_time != previous["t"]:
            store.put(STREAM_TIME, {"t": stream_time})
            # Windows ending at or before stream_time - grace are closed: delete them
            # once per window boundary crossed.
            if previous["t"] < 0 or previous["t"] // size_ms != stream_time // size_ms:
                cutoff = stream_time - grace_ms - size_ms + 1
                for old, _ in list(
                    store.range(_window_key(0, ""), _window_key(max(cutoff, 0), ""))
                ):
                    store.delete(old)
        window = _window_key(start, str(record.key))
        current = store.get(window) or {"count": 0, "sum": 0}
        updated = {"count": current["count"] + 1, "sum": current["sum"] + amount}
        store.put(window, updated)
        ctx.send(
            "output",
            f"{record.key}@{start}",
            {"key": record.key, "start": start, "end": start + size_ms, **updated},
        )

    return process


def topology(
    application_id: str = "windowed-totals",
    input: str = "amounts",
    output: str = "window-totals",
    *,
    size_ms: str | int = 60_000,
    grace_ms: str | int = 10_000,
    on_error: ErrorPolicy = "stop",
) -> Topology:
    app = Topology(application_id)
    source = app.topic(input, key=STRING, value=JSON)
    windows = app.store("windows", key=BYTES, value=JSON)
    out = app.topic(output, key=STRING, value=JSON, label="output")
    app.subtopology(
        [source],
        aggregate(int(size_ms), int(grace_ms)),
        stores=[windows],
        sinks=[out],
        on_error=on_error,
    )
    return app
