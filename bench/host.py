"""The machine a benchmark ran on, printed and recorded beside its figures: hosts of one
kind differ up to 4x in speed, and ``/proc/cpuinfo`` may name only "AMD EPYC", so each run
also measures a short calibration figure of its own (docs/benchmarks.md compares runs of
two hosts by it)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

CALIBRATION_BYTES = 64 << 20  # hashed once: about a tenth of a second on a quick core


def cpu() -> str:
    """The CPU's model name and clock as /proc/cpuinfo gives them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    fields = dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in text.splitlines()) if v
    )
    return f"{fields.get('model name', 'unknown CPU')} {fields.get('cpu MHz', '?')} MHz"


def memory_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)


def calibration() -> float:
    """MB/s of SHA-256 over 64 MiB on one core: a CPU-bound figure that scales with the
    host as the Python and JVM work of a run does."""
    data = b"\x5a" * (1 << 20)
    h = hashlib.sha256()
    start = time.perf_counter()
    for _ in range(CALIBRATION_BYTES >> 20):
        h.update(data)
    return CALIBRATION_BYTES / (1 << 20) / (time.perf_counter() - start)


def describe() -> str:
    """One line: CPU, cores, memory and the calibration figure, measured now."""
    return (
        f"host: {cpu()}, {os.cpu_count()} cores, {memory_gib():.0f} GiB; "
        f"calibration {calibration():.0f} MB/s sha256 (bench.host)"
    )


if __name__ == "__main__":
    print(describe())
