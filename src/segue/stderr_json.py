"""Every line a process writes to stderr as a JSON object, for the JSON log formats of the
worker and the operator (``--log-format json``).

Python's logging is not the only writer of a pod's stderr: librdkafka prints its own
``%3|...`` lines there from C, and an uncaught traceback goes there too. A log shipper
that expects one object per line would take those for broken JSON. So in JSON form the
process's file descriptor 2 becomes a pipe: a thread reads it and writes each line, as
``{"time", "level": "ERROR", "logger": <source>, "message", ...}``, to the real stderr,
while the logging handler writes its own objects to the real stderr directly, and so
does the hook for an uncaught exception (the pump may not outlive the exit it causes). (Routing
librdkafka through a Python ``logger`` setting instead delivers its lines only when the
client is polled, and not at all for an AdminClient: confluent-kafka-python#1734.) This
module imports nothing of Segue's: the worker and the operator both use it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import IO, Any


def wrap_stderr(fields: Callable[[], dict[str, Any]], source: str) -> IO[str]:
    """Point fd 2 at a pipe whose lines go out as JSON objects (``fields()`` added to
    each, ``logger`` = ``source``); returns a text stream on the real stderr for the
    logging handler."""
    # two streams on two copies of the real stderr: the handler's, and this module's own
    # (a text stream is not safe to share between threads; each line is one write)
    real, own = (
        os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace") for _ in range(2)
    )
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    lock = threading.Lock()

    def emit(message: str, level: str, origin: str) -> None:
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        record = {"time": now, "level": level, "logger": origin, "message": message}
        with lock:
            own.write(json.dumps({**record, **fields()}) + "\n")

    def pump() -> None:
        with os.fdopen(read_end, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    emit(line.rstrip("\n"), "ERROR", source)

    def uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        # straight to the real stderr: the pump may not outlive the interpreter's exit
        emit("".join(traceback.format_exception(kind, exc, tb)).rstrip(), "CRITICAL", "uncaught")

    sys.excepthook = uncaught
    threading.Thread(target=pump, name="stderr-json", daemon=True).start()
    return real
