"""The operator's resident memory over a soak, sampled from /proc, and its plot.

A leak shows as a line that keeps climbing across events instead of levelling off, so
the plot marks each event of ``plan.schedule`` on the same time axis.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path


def rss_mib(pid: int) -> float | None:
    """Resident set size of ``pid`` in MiB; None once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.start_at = time.monotonic()
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MiB)
        self.marks: list[tuple[float, str]] = []
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.is_set():
            rss = rss_mib(self.pid)
            if rss is not None:
                self.samples.append((time.monotonic() - self.start_at, rss))
            self._stopped.wait(self.every)

    def mark(self, label: str) -> None:
        self.marks.append((time.monotonic() - self.start_at, label))

    def stop(self) -> None:
        self._stopped.set()
        self.join(10)

    def summary(self) -> dict[str, float]:
        """First, peak and last sample, and the last against the first after input began."""
        if not self.samples:
            return {}
        began = next((t for t, label in self.marks if label == "input"), 0.0)
        steady = [m for t, m in self.samples if t >= began] or [self.samples[-1][1]]
        return {
            "first": round(self.samples[0][1], 1),
            "at_input": round(steady[0], 1),
            "peak": round(max(m for _, m in self.samples), 1),
            "last": round(self.samples[-1][1], 1),
        }


def plot(sampler: RssSampler, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.5))
    if sampler.samples:
        ax.plot([t / 60 for t, _ in sampler.samples], [m for _, m in sampler.samples])
    colours = {"scale": "tab:green", "kill": "tab:red", "broker": "tab:purple"}
    for t, label in sampler.marks:
        ax.axvline(t / 60, color=colours.get(label.split()[0], "grey"), alpha=0.3, lw=1)
    ax.set_xlabel("minutes (lines: green scale, red pod kill, purple broker restart)")
    ax.set_ylabel("operator RSS (MiB)")
    ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
