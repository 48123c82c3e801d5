"""One run's numbers (:class:`Row`) and the side-by-side table with the ratios of Segue and
of Kafka Streams + Segue to Kafka Streams, as docs/benchmarks.md shows it."""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

from .measure import LATE_AFTER, Lateness
from .moves import Moves


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
    moves: Moves | None = None  # the counting tasks' handovers
    trace: str = ""  # where the moved tasks' pauses went (Segue: ``trace.table``)
    rebalances: int | None = None  # the group's rebalances from the request until balanced
    notes: str = ""  # what else the run says about itself (Kafka Streams + Segue: fallbacks)

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
            + (f"; {self.moves.describe()}" if self.moves else "")
            + (f"; {self.rebalances} rebalances" if self.rebalances is not None else "")
            + (f"; {self.notes}" if self.notes else "")
        )


def _ratio(ours: float, theirs: float) -> str:
    if theirs == 0:
        return "-" if ours == 0 else "inf"
    return f"{ours / theirs:.2f}"


def _handovers(r: Row) -> str:
    if r.moves is None:
        return "-"
    twice = f", twice: {' '.join(r.moves.twice)}" if r.moves.twice else ""
    return f"{r.moves.count} ({r.moves.needed}){twice}"


def table(rows: list[Row], args: argparse.Namespace) -> str:
    """Every run, then per scale the median of each number over a side's runs and the
    ratio of those medians."""
    head = (
        f"WordCount, 6 partitions, {args.words:,} distinct words prefilled, {args.rate:.0f} "
        f"lines/s while scaling; Kafka Streams probing.rebalance.interval.ms={args.probing_ms}; "
        f"Kafka Streams + Segue learnerPromotion={args.learner_promotion}; "
        f"late = visible more than {LATE_AFTER:.0f} s after its input; handovers = counting "
        "tasks that changed hands (the fewest balance needs); rebalances = the group's, from "
        "the request until balanced (Kafka Streams: its leader's assignor verdicts; Kafka "
        "Streams + Segue: the operator's count of the plugin's reports).\n\n"
        "| scale | side | run | balanced s | most stateful actives on one instance | "
        "records restored | MB restored | longest pause s | late records | "
        "counting handovers (needed) | rebalances | final stateful actives |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for before, after in sorted({(r.before, r.after) for r in rows}):
        sides: dict[str, list[Row]] = {}
        for r in rows:
            if (r.before, r.after) == (before, after):
                sides.setdefault(r.side, []).append(r)
        medians: dict[str, dict[str, float]] = {}
        for side, runs in sides.items():
            for n, r in enumerate(runs, 1):
                lines.append(
                    f"| {before}->{after} | {side} | {n} | {r.balanced:.1f} | {r.peak} | "
                    f"{r.restored_records:,} | {r.restored_bytes / 1e6:.2f} | {r.pause:.2f} | "
                    f"{r.late.late:,} of {r.late.counted:,} | {_handovers(r)} | "
                    f"{'-' if r.rebalances is None else r.rebalances} | "
                    f"{'/'.join(map(str, sorted(r.final)))} |"
                )
            m = {
                "balanced": statistics.median(r.balanced for r in runs),
                "peak": statistics.median(r.peak for r in runs),
                "records": statistics.median(r.restored_records for r in runs),
                "bytes": statistics.median(r.restored_bytes for r in runs),
                "pause": statistics.median(r.pause for r in runs),
                "late": statistics.median(r.late.late for r in runs),
            }
            medians[side] = m
            counts = [r.rebalances for r in runs if r.rebalances is not None]
            rebalances = f"{statistics.median(counts):g}" if len(counts) == len(runs) else ""
            if len(runs) > 1:
                lines.append(
                    f"| {before}->{after} | {side} | median of {len(runs)} | "
                    f"{m['balanced']:.1f} | {m['peak']:g} | {m['records']:,.0f} | "
                    f"{m['bytes'] / 1e6:.2f} | {m['pause']:.2f} | {m['late']:,.0f} | | "
                    f"{rebalances} | |"
                )
        k = medians.get("Kafka Streams")
        for side, label in (("Segue", "Segue / KS"), ("Kafka Streams + Segue", "KS + Segue / KS")):
            s = medians.get(side)
            if s and k:
                cells = " | ".join(
                    _ratio(s[key], k[key])
                    for key in ("balanced", "peak", "records", "bytes", "pause", "late")
                )
                lines.append(f"| {before}->{after} | {label} | | {cells} | | | |")
    return "\n".join(lines)
