"""Two ways of doing one thing, timed A B A B: a host's drift (another process, a warm
cache) hits both alike. :func:`alternate` runs the pairs, :func:`ratio` is the median of
their ratios pair by pair, :func:`report` is the markdown block the benchmarks print
(the host, the runs, a table of medians, the ratio) for docs/benchmarks.md."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from bench.host import describe

T = TypeVar("T")


def alternate(first: Callable[[], T], second: Callable[[], T], runs: int) -> list[tuple[T, T]]:
    """``runs`` pairs, each ``first()`` then ``second()``."""
    return [(first(), second()) for _ in range(runs)]


def ratio(pairs: Iterable[tuple[float, float]]) -> float:
    """The median of ``a / b`` over the pairs."""
    return statistics.median(a / b for a, b in pairs)


def report(runs: str, header: Sequence[str], rows: Sequence[Sequence[str]], ratio_line: str) -> str:
    """The host, ``runs`` (what ran how often), a table of ``header`` and ``rows``, then
    ``ratio_line``."""
    return "\n".join(
        [
            describe(),
            f"{runs}, alternating; medians",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
            ratio_line,
        ]
    )
