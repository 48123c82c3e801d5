"""Where the suite's time goes: a per-folder table at the end of every run.

Beside pytest's own ``--durations`` (the slowest tests, set in ``pyproject.toml``), the
terminal summary gets one line per test folder (``tests/<folder>``): its tests and the
seconds their setup, call and teardown took, the session fixtures' start-up counted
in the folder of the test that first needed them. ``docs/ci.md`` keeps the table. Every
test's seconds, and its setup's, call's and teardown's, go to ``build/test-times.json``
(:data:`TIMES_FILE`), to compare runs,
and every wait of the end-to-end helpers (:func:`note_wait`) to ``build/test-waits.jsonl``:
which test waited how long for what.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
from _pytest.terminal import TerminalReporter

TIMES_FILE = Path("build") / "test-times.json"
WAITS_FILE = Path(__file__).resolve().parents[1] / "build" / "test-waits.jsonl"


def note_wait(what: str, seconds: float, timeout: float) -> None:
    """Append one wait (its label, its seconds and bound) under the running test."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
    WAITS_FILE.parent.mkdir(parents=True, exist_ok=True)
    line = {"test": test, "what": what, "seconds": round(seconds, 2), "timeout": timeout}
    with WAITS_FILE.open("a") as out:
        out.write(json.dumps(line) + "\n")


def folder_of(nodeid: str) -> str:
    """``tests/operator/test_x.py::t`` -> ``operator``; a test at the top -> ``.``."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "."


class FolderTimes:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.tests: dict[str, set[str]] = defaultdict(set)
        self.phases: dict[str, dict[str, float]] = defaultdict(dict)  # test -> when -> s

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        folder = folder_of(report.nodeid)
        self.seconds[folder] += report.duration
        self.tests[folder].add(report.nodeid)
        self.phases[report.nodeid][report.when] = report.duration

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        if not self.seconds:
            return
        total = sum(self.seconds.values())
        terminalreporter.section("seconds per test folder")
        for folder, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(
                f"{folder:<14} {len(self.tests[folder]):>5} tests {seconds:>9.1f} s "
                f"{100 * seconds / total:>5.1f} %"
            )
        terminalreporter.write_line(
            f"{'all':<14} {sum(map(len, self.tests.values())):>5} tests {total:>9.1f} s"
        )
        out = terminalreporter.config.rootpath / TIMES_FILE
        out.parent.mkdir(parents=True, exist_ok=True)
        times = {
            test: {"seconds": round(sum(phases.values()), 2)}
            | {when: round(s, 2) for when, s in phases.items()}
            for test, phases in self.phases.items()
        }
        ranked = dict(sorted(times.items(), key=lambda kv: -kv[1]["seconds"]))
        out.write_text(json.dumps(ranked, indent=1) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the run's own process, not an xdist worker
        WAITS_FILE.unlink(missing_ok=True)  # this run's waits only
    config.pluginmanager.register(FolderTimes(), "segue-folder-times")
