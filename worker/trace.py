"""One log line per step of a handover, in one format a benchmark can read back.

A moved task pauses from its old owner's last commit to its new owner's first one;
where that time goes is only visible step by step: the old owner's final commit
(``released``) and its letting go (``left``), the new owner's fence (``fenced``,
``init_transactions``), the offsets read after it (``measured``), the changelog tail
restored (``running`` follows it), the first input record and the first commit.
``processing``, ``fencing``, ``active`` and ``taskset`` call :func:`phase`;
``bench/kstreams/trace`` parses the lines with :data:`PATTERN`
(docs/benchmarks.md, "Where a handover's pause goes"). One line per step and
activation, never per record.
"""

from __future__ import annotations

import logging
import re

from segue.worker.logs import about

log = logging.getLogger(__name__)

PHASES = ("released", "left", "fenced", "measured", "running", "first-record", "first-commit")
PATTERN = re.compile(r"handover task=(?P<task>\S+) phase=(?P<phase>\S+)(?: (?P<detail>.*))?$")


def phase(task: str, name: str, detail: str = "") -> None:
    """Log that ``task`` reached step ``name`` of a handover (``detail``: its numbers)."""
    log.info(
        "handover task=%s phase=%s%s", task, name, f" {detail}" if detail else "", extra=about(task)
    )
