"""helm, built from the Go module proxy, lints and renders the chart."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from segue.stack.paths import Binaries

pytestmark = pytest.mark.smoke
CHART = Path(__file__).resolve().parents[2] / "charts" / "segue"


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Binaries.locate().helm), *args], capture_output=True, text=True, check=False
    )


def test_helm_lint_passes() -> None:
    result = helm("lint", "--strict", str(CHART))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_helm_lint_fails_on_a_broken_chart(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "Chart.yaml").write_text("apiVersion: v2\nname: broken\n")  # no version
    result = helm("lint", str(broken))
    assert result.returncode != 0


def test_helm_template_renders_the_operator() -> None:
    """helm renders the chart offline; tests/chart checks what it renders in detail."""
    result = helm("template", "demo", str(CHART), "-n", "segue-system")
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("ServiceAccount", "demo-segue"), ("Deployment", "demo-segue")} <= names
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["segue"]
    assert container["args"][0] == "operator"
