"""What ``Progress.longest_stall`` counts, on samples written by hand: an app's first
commits after the watch began are not a stall once every task was seen moving, and a
stall under way at that moment counts whole."""

from __future__ import annotations

import time

import pytest

from .progress import Progress


def _watch(advances: dict[str, list[float]], since: float | None) -> Progress:
    """A ``Progress`` with no reader: its samples advance each partition at the given
    times (seconds before now), its first sample 10 s before now."""
    progress = Progress("unused:9092", "group", ["t"])
    progress.partitions = list(advances)
    now = time.monotonic()
    moments = sorted({-10.0, *(t for ts in advances.values() for t in ts)})
    offsets = dict.fromkeys(advances, 0)
    for moment in moments:
        for p, ts in advances.items():
            offsets[p] += moment in ts
        progress.samples.append((now + moment, dict(offsets)))
    progress.moving_since = None if since is None else now + since
    return progress


def test_the_first_commits_are_no_stall_once_every_task_was_seen_moving() -> None:
    # "a" begins committing 6 s after the first sample, then every half second
    ticks = [-4.0 + 0.5 * i for i in range(8)]
    progress = _watch({"a": ticks, "b": [-9.5, *ticks]}, since=-2.0)
    stall, where = progress.longest_stall()
    assert stall == pytest.approx(0.5, abs=0.01)
    assert where in {"a", "b"}


def test_a_stall_under_way_when_every_task_was_seen_moving_counts_whole() -> None:
    ticks = [-3.0 + 0.5 * i for i in range(6)]
    progress = _watch({"a": [-9.0, -8.5, *ticks]}, since=-6.0)
    stall, where = progress.longest_stall()
    assert (round(stall, 2), where) == (5.5, "a")  # -8.5 to -3.0, across the moment


def test_without_a_moment_every_task_moved_the_whole_watch_counts() -> None:
    progress = _watch({"a": [-4.0, -3.5, -3.0, -0.5]}, since=None)
    stall, where = progress.longest_stall()
    assert (round(stall, 2), where) == (6.0, "a")  # from the first sample at -10 s
