"""The worker's log lines: human by default, or one JSON object per line
(``--log-format json``, env ``SEGUE_LOG_FORMAT``) for a platform's log shipper.

Every JSON line carries the app (its application id) and the pod (the member id); a
line about one task or one generation carries ``task`` or ``generation`` too, from the
``extra`` its call passes (``log.info(..., extra=about(task))``). The message is the same
text as the human line: nothing is logged in JSON that the plain form does not say, so
the secret checks of the plain form hold for both. Whatever else writes to stderr in
JSON form (librdkafka's own lines) is wrapped by :mod:`segue.stderr_json`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from segue.stderr_json import wrap_stderr

FIELDS = ("task", "generation")  # per-line fields a call may pass as ``extra``
PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def about(task: str | None = None, generation: int | None = None) -> dict[str, Any]:
    """The ``extra`` of a log call about ``task`` and/or ``generation``."""
    found = {"task": task, "generation": generation}
    return {k: v for k, v in found.items() if v is not None}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, app, pod and the
    record's :data:`FIELDS`; an exception's traceback as ``exception``."""

    def __init__(self, app: str, pod: str) -> None:
        super().__init__()
        self.app, self.pod = app, pod

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "app": self.app,
            "pod": self.pod,
        }
        for field in FIELDS:
            if hasattr(record, field):
                line[field] = getattr(record, field)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure(level: str, form: Literal["plain", "json"], app: str, pod: str) -> None:
    """Route every logger of the process to stderr in ``form``; in JSON (once per
    process), whatever else writes to stderr (librdkafka's own lines, a traceback) comes
    out as objects too."""
    if form == "json":
        stream = wrap_stderr(lambda: {"app": app, "pod": pod}, "segue.worker.stderr")
        handler = logging.StreamHandler(stream)
        handler.setFormatter(JsonFormatter(app, pod))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(PLAIN))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
