"""docs/install.md's values table is the one tools/values_table.py generates, and the
generator refuses a schema or values file it cannot document completely."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .helm import CHART, ROOT

TOOL = ROOT / "tools" / "values_table.py"
DOC = ROOT / "docs" / "install.md"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, check=False
    )


def test_the_install_doc_table_is_current() -> None:
    result = run("--check", DOC)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_hand_edited_table_is_stale_and_write_restores_it(tmp_path: Path) -> None:
    doc = tmp_path / "install.md"
    doc.write_text(DOC.read_text().replace("| `2` |", "| `3` |", 1))
    stale = run("--check", doc)
    assert stale.returncode == 1
    assert "stale" in stale.stdout
    assert run("--write", doc).returncode == 0
    assert doc.read_text() == DOC.read_text()


def chart_copy(tmp_path: Path) -> Path:
    chart = tmp_path / "segue"
    shutil.copytree(CHART, chart)
    return chart


def test_a_property_without_a_description_is_refused(tmp_path: Path) -> None:
    chart = chart_copy(tmp_path)
    schema = json.loads((chart / "values.schema.json").read_text())
    del schema["properties"]["logLevel"]["description"]
    (chart / "values.schema.json").write_text(json.dumps(schema))
    result = run("--check", DOC, "--chart", chart)
    assert result.returncode == 2
    assert "logLevel has no description" in result.stderr


def test_a_value_the_schema_does_not_describe_is_refused(tmp_path: Path) -> None:
    chart = chart_copy(tmp_path)
    with (chart / "values.yaml").open("a") as values:
        values.write("undocumented: 1\n")
    result = run("--check", DOC, "--chart", chart)
    assert result.returncode == 2
    assert "undocumented" in result.stderr


def test_every_value_has_a_row() -> None:
    text = DOC.read_text()
    for key in (
        "replicaCount",
        "watchNamespaces",
        "settings.scrapeWorkers",
        "leaderElection.retryPeriod",
        "metrics.serviceMonitor.labels",
        "securityContext",
    ):
        assert f"| `{key}` |" in text
