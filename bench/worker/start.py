"""A worker's start: the CPU a fresh interpreter spends loading what ``segue worker``
loads before it reads its assignment, against the same plus the ``kubernetes`` client's
``CoreV1Api`` (what the worker's assignment watch loaded before ``segue.worker.kubeapi``).

Every pod of a scale pays this before it can report, and several pods start at once on
a node: the CPU figure is what they share. Runs alternate A B A B, each a new process
(user + sys from ``resource.getrusage`` of the finished child), medians and the ratio.

    .venv/bin/python -m bench.worker.start [--runs 15]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

from bench.ab import alternate, ratio, report

WORKER = (
    "import segue.cli, segue.worker.cli, segue.worker.config, segue.worker.logs, "
    "segue.worker.describe, segue.worker.freshness, segue.worker.http, segue.worker.metrics, "
    "segue.worker.runtime, segue.worker.watch, segue.worker.watchdog, "
    "segue.worker.apps.wordcount, segue.podenv"
)
PEER = WORKER + "; from kubernetes import client, watch; client.CoreV1Api"
CHECK = "; import sys; assert ('kubernetes' in sys.modules) == {peer}"


def once(code: str) -> tuple[float, float]:
    """CPU and wall seconds of one fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall


def main(runs: int) -> str:
    once(WORKER)  # warm the page cache and the byte-code caches of both
    once(PEER)
    pairs = alternate(
        lambda: once(WORKER + CHECK.format(peer=False)),
        lambda: once(PEER + CHECK.format(peer=True)),
        runs,
    )
    worker, peer = [w for w, _ in pairs], [p for _, p in pairs]
    cpu_w, cpu_p = (statistics.median(c for c, _ in r) for r in (worker, peer))
    wall_w, wall_p = (statistics.median(w for _, w in r) for r in (worker, peer))
    return report(
        f"{runs} runs each",
        ("what loads", "CPU s", "wall s"),
        [
            ("the worker's start (segue.worker.kubeapi)", f"{cpu_w:.3f}", f"{wall_w:.3f}"),
            (
                "the same with the kubernetes client's CoreV1Api",
                f"{cpu_p:.3f}",
                f"{wall_p:.3f}",
            ),
        ],
        f"CPU ratio, client / worker, pair by pair: {ratio((p[0], w[0]) for w, p in pairs):.2f}x",
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each (default 15)")
    print(main(parser.parse_args().runs))
