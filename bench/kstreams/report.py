"""One run's numbers (:class:`Row`) and the side-by-side table with Segue / Kafka Streams
ratios, as docs/benchmarks.md shows it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .measure import LATE_AFTER, Lateness


@dataclass(frozen=True)
class Row:
    side: str
    before: int
    after: int
    balanced: float  # seconds from the scale request
    peak: int  # most stateful actives one instance held from the scale request on
    restored_records: int
    restored_bytes: int  # key+value bytes
    late: Lateness
    final: list[int]  # stateful actives per instance at the end

    scaled: float  # the scale request, Unix s

    @property
    def pause(self) -> float:
        return max((gap for gap, _ in self.late.pauses.values()), default=0.0)

    def worst(self) -> str:
        """Which task paused longest, and when its pause ended after the scale request."""
        if not self.late.pauses:
            return "no output"
        task, (gap, end) = max(self.late.pauses.items(), key=lambda item: item[1][0])
        return f"task 1_{task}: {gap:.2f} s ending {end - self.scaled:.1f} s after the request"

    def describe(self) -> str:
        return (
            f"{self.side} {self.before}->{self.after}: balanced {self.balanced:.1f} s, peak "
            f"{self.peak}, restored {self.restored_records:,} records / "
            f"{self.restored_bytes:,} B, longest pause {self.pause:.2f} s, late "
            f"{self.late.late:,} of {self.late.counted:,}, final {sorted(self.final)}; "
            f"pauses: {self.worst()}; all tasks' longest: "
            f"{[round(g, 2) for g, _ in sorted(self.late.pauses.values(), reverse=True)]}"
        )


def _ratio(ours: float, theirs: float) -> str:
    if theirs == 0:
        return "-" if ours == 0 else "inf"
    return f"{ours / theirs:.2f}"


def table(rows: list[Row], args: argparse.Namespace) -> str:
    head = (
        f"WordCount, 6 partitions, {args.words:,} distinct words prefilled, {args.rate:.0f} "
        f"lines/s while scaling; Kafka Streams probing.rebalance.interval.ms={args.probing_ms}; "
        f"late = visible more than {LATE_AFTER:.0f} s after its input.\n\n"
        "| scale | side | balanced s | most stateful actives on one instance | "
        "records restored | MB restored | longest pause s | late records | "
        "final stateful actives |\n|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for before, after in sorted({(r.before, r.after) for r in rows}):
        pair = {r.side: r for r in rows if (r.before, r.after) == (before, after)}
        for r in pair.values():
            lines.append(
                f"| {before}->{after} | {r.side} | {r.balanced:.1f} | {r.peak} | "
                f"{r.restored_records:,} | {r.restored_bytes / 1e6:.2f} | {r.pause:.2f} | "
                f"{r.late.late:,} of {r.late.counted:,} | {'/'.join(map(str, sorted(r.final)))} |"
            )
        s, k = pair.get("Segue"), pair.get("Kafka Streams")
        if s and k:
            lines.append(
                f"| {before}->{after} | Segue / KS | {_ratio(s.balanced, k.balanced)} | "
                f"{_ratio(s.peak, k.peak)} | {_ratio(s.restored_records, k.restored_records)} | "
                f"{_ratio(s.restored_bytes, k.restored_bytes)} | {_ratio(s.pause, k.pause)} | "
                f"{_ratio(s.late.late, k.late.late)} | |"
            )
    return "\n".join(lines)
