"""segue.pipeline.report: report.html from the rows of a ``segue simulate`` run.

Plain rows in (dicts with the columns of :class:`~segue.pipeline.rows.Result`, the
summary's, :class:`~segue.pipeline.rows.Failure`'s), one HTML file out, so a report can
be made from a Spark run or from :func:`~segue.pipeline.evaluate.evaluate_all` alike.
:mod:`.analysis` concludes, :mod:`.plots` draws (matplotlib), :mod:`.html` lays out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .html import render


def write_report(
    path: Path,
    results: Sequence[dict[str, Any]],
    summary: Sequence[dict[str, Any]],
    errors: Sequence[dict[str, Any]],
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(results, summary, errors), encoding="utf-8")


__all__ = ["render", "write_report"]
