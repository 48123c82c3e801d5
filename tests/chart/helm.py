"""Run the local stack's helm on the chart and read what it renders.

``helm template`` is all a chart test needs: it validates the values against
values.schema.json and renders every template exactly as an install would, with no
cluster. Values go in as a file (``render(values)``), so a test states them as data.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from segue.stack.paths import Binaries

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "segue"
RELEASE = "demo"
NAMESPACE = "segue-system"
FULLNAME = "demo-segue"


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Binaries.locate().helm), *args], capture_output=True, text=True, check=False
    )


def with_values(
    command: str, values: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    """``helm <command> ... -f <values>`` (``template`` or ``lint``)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(values, file)
        file.flush()
        if command == "lint":
            return helm("lint", "--strict", str(CHART), "-f", file.name, *args)
        return helm(command, RELEASE, str(CHART), "-n", NAMESPACE, "-f", file.name, *args)


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every object ``helm template`` renders for ``values``; fails the test if it cannot."""
    result = with_values("template", values or {})
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def only(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = only(objects, "Deployment")
    return found


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = deployment(objects)["spec"]["template"]["spec"]["containers"]
    return found


# NOTES.txt is rendered only by install and upgrade, which need a cluster; a copy of the
# chart renders the very same file into a ConfigMap, with the same values and helpers.
_NOTES_PROBE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
data:
  notes: {{ tpl (.Files.Get "notes-under-test.txt") . | quote }}
"""


def notes(values: dict[str, Any] | None = None) -> str:
    """What ``helm install`` prints after installing with ``values`` (the chart's NOTES.txt)."""
    with tempfile.TemporaryDirectory() as tmp:
        chart = Path(tmp) / "segue"
        shutil.copytree(CHART, chart)
        shutil.copy(chart / "templates" / "NOTES.txt", chart / "notes-under-test.txt")
        (chart / "templates" / "zz-notes.yaml").write_text(_NOTES_PROBE)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
            yaml.safe_dump(values or {}, file)
            file.flush()
            result = helm(
                "template",
                RELEASE,
                str(chart),
                "-n",
                NAMESPACE,
                "-f",
                file.name,
                "--show-only",
                "templates/zz-notes.yaml",
            )
    assert result.returncode == 0, result.stderr
    rendered: str = yaml.safe_load(result.stdout)["data"]["notes"]
    return rendered
