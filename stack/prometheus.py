"""Prometheus on the local stack: the pinned ``prometheus`` and ``promtool`` (built from
the Go module proxy by ``stack/install/prometheus.sh``, version in ``versions.env``).

``promtool`` unit-tests the chart's alert rules (tests/monitoring/test_alerts.py); the
server is what the monitoring e2e scrapes the operator and the app pods with.
"""

from __future__ import annotations

from pathlib import Path

from segue.stack.paths import cache_dir, read_versions
from segue.stack.process import StackError


def binary(name: str) -> Path:
    """``prometheus`` or ``promtool`` at the pinned version; StackError naming ``make
    stack`` when absent."""
    version = read_versions()["PROMETHEUS_VERSION"]
    found = cache_dir() / f"{name}-{version}" / "bin" / name
    if not found.exists():
        raise StackError(f"{name} is not installed (missing: {found}); run `make stack`")
    return found
