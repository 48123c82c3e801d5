"""values.schema.json refuses a bad value before anything renders, and names it."""

from __future__ import annotations

import pytest

from .helm import CHART, helm

BAD = [
    ("replicaCount=-1", "replicaCount"),
    ("replicaCount=two", "replicaCount"),
    ("logFormat=xml", "logFormat"),
    ("logLevel=verbose", "logLevel"),
    ("metrics.port=70000", "metrics/port"),
    ("health.port=0", "health/port"),
    ("foo=1", "foo"),
    ("settings.bogus=1", "bogus"),
    ("watchNamespaces={Bad_NS}", "watchNamespaces"),
    ("leaderElection.leaseDuration=-5", "leaseDuration"),
    ("leaderElection.enabled=maybe", "leaderElection/enabled"),
    ("settings.busyInterval=0", "busyInterval"),
    ("settings.scrapeWorkers=0", "scrapeWorkers"),
    ("image.pullPolicy=Sometimes", "pullPolicy"),
    ("metrics.serviceMonitor.interval=soon", "interval"),
]


@pytest.mark.parametrize(("setting", "named"), BAD)
def test_a_bad_value_is_refused_by_name(setting: str, named: str) -> None:
    result = helm("template", "demo", str(CHART), "--set", setting)
    assert result.returncode != 0, f"{setting} was accepted"
    assert named in result.stderr, result.stderr


def test_the_same_values_done_right_are_accepted() -> None:
    good = [
        "replicaCount=3",
        "logFormat=json",
        "metrics.port=9402",
        "watchNamespaces={team-a}",
        "leaderElection.leaseDuration=20",
    ]
    sets = [a for s in good for a in ("--set", s)]
    # --set reads 0.1 as a string; fractions go in with --set-json (docs/install.md).
    fraction = ["--set-json", "settings.busyInterval=0.1"]
    result = helm("template", "demo", str(CHART), *sets, *fraction)
    assert result.returncode == 0, result.stderr


def test_a_fractional_lease_duration_is_refused() -> None:
    """The Lease API counts whole seconds, and so does ``--lease-duration``."""
    result = helm("template", "demo", str(CHART), "--set-json", "leaderElection.leaseDuration=1.5")
    assert result.returncode != 0
    assert "leaseDuration" in result.stderr, result.stderr
