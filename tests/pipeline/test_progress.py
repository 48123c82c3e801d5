"""The progress display: off a terminal, a line per 10% and one at the end, no redraws."""

from __future__ import annotations

import io
import time

from segue.pipeline.spark import progress


def test_off_a_terminal_it_prints_a_few_plain_lines() -> None:
    out = io.StringIO()
    done = [0]
    with progress.watching(100, lambda: done[0], stream=out):
        for _ in range(100):
            done[0] += 1
            time.sleep(0.004)  # several polls would each see a new count
        time.sleep(progress.POLL * 2)
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("simulating: 100/100")
    assert len(lines) <= 12  # never one per poll or per unit
    assert all(line.startswith("simulating: ") for line in lines)


def test_a_quick_run_still_ends_with_its_count() -> None:
    out = io.StringIO()
    with progress.watching(3, lambda: 3, stream=out):
        pass
    assert out.getvalue().splitlines()[-1].startswith("simulating: 3/3")
