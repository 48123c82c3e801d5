"""The chart's CRD is the generated one, byte for byte (``make crds`` writes both)."""

from __future__ import annotations

from .helm import CHART, ROOT


def test_the_chart_ships_the_generated_crd_unchanged() -> None:
    chart_copy = (CHART / "crds" / "streamapp.yaml").read_bytes()
    generated = (ROOT / "crds" / "streamapp.yaml").read_bytes()
    assert chart_copy == generated, "stale charts/segue/crds/streamapp.yaml: run make crds"


def test_the_chart_crds_folder_holds_only_that_file() -> None:
    assert sorted(p.name for p in (CHART / "crds").iterdir()) == ["streamapp.yaml"]
