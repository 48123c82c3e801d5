"""docs/monitoring.md's install command, as typed there, rendered by the chart.

``helm install`` needs a cluster with the Prometheus Operator's CRDs; ``helm template``
with the same arguments renders exactly what that install would create, so the command
is read from the doc, only its verb swapped, and what it turns on is checked."""

from __future__ import annotations

import re
import shlex

from tests.chart.helm import CHART, ROOT, helm

DOC = ROOT / "docs" / "monitoring.md"


def documented_install() -> list[str]:
    """The ``helm install`` command of the doc's first sh block, as arguments."""
    block = re.search(r"```sh\n(helm install .*?)\n```", DOC.read_text(), re.S)
    assert block, f"{DOC} shows no helm install command"
    return shlex.split(block.group(1).replace("\\\n", " "))


def test_the_documented_install_turns_on_the_rule_and_the_service_monitor() -> None:
    argv = documented_install()
    assert argv[:2] == ["helm", "install"], argv
    assert argv[3] == "charts/segue", argv  # run from the repository's root, as the doc says
    done = helm("template", *argv[2:3], str(CHART), *argv[4:])
    assert done.returncode == 0, done.stderr
    kinds = re.findall(r"^kind: (\w+)$", done.stdout, re.M)
    assert "PrometheusRule" in kinds, kinds
    assert "ServiceMonitor" in kinds, kinds
    assert "SegueLearnerStalled" in done.stdout
    assert "namespace: segue-system" in done.stdout  # the -n of the command
