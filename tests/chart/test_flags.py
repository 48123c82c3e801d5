"""Every flag of ``segue operator`` is a chart value, and what the chart passes, the CLI takes.

The flags come from the CLI itself (``segue operator --help``), so a flag added to
the operator fails here until the chart renders it or it joins ``NOT_VALUES``; and the
rendered arguments are parsed by the operator's own parser, so a flag the chart
misspells, or the CLI drops, fails too.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from segue.operator import cli

from .helm import container, render

# Flags that are not chart values: out-of-cluster access, help, and a debug switch
# (logLevel=debug covers it; extraArgs can still pass it).
NOT_VALUES = {"--kubeconfig", "--help", "--verbose"}
# Between them these render every flag the chart knows (each mode passes its own).
CASES = [{}, {"leaderElection": {"enabled": False}}, {"watchNamespaces": ["team-a"]}]
# What the kubelet expands $(VAR) to; any value of the right shape.
POD_ENV = {
    "$(POD_IP)": "10.0.0.7",
    "$(POD_NAME)": "demo-segue-0",
    "$(POD_NAMESPACE)": "segue-system",
}


def help_flags() -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "segue", "operator", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", result.stdout))


def rendered_args(values: dict[str, object]) -> list[str]:
    arguments = list(container(render(values))["args"])
    assert arguments[0] == "operator"
    return arguments[1:]


def flag(argument: str) -> str:
    return argument.split("=", 1)[0]


def test_every_operator_flag_is_a_chart_value() -> None:
    offered = help_flags()
    assert "--metrics-port" in offered  # the help was read
    rendered = {flag(a) for values in CASES for a in rendered_args(values)}
    assert sorted(offered - NOT_VALUES - rendered) == []


def test_the_chart_passes_only_flags_the_operator_offers() -> None:
    offered = help_flags()
    rendered = {flag(a) for values in CASES for a in rendered_args(values)}
    assert sorted(rendered - offered) == []


def test_the_operator_parses_what_the_chart_renders() -> None:
    for values in CASES:
        parser = argparse.ArgumentParser(exit_on_error=False)
        cli.configure(parser)
        arguments = rendered_args(values)
        for variable, value in POD_ENV.items():
            arguments = [a.replace(variable, value) for a in arguments]
        try:
            parsed = parser.parse_args(arguments)
        except SystemExit:
            pytest.fail(f"segue operator refuses the chart's arguments {arguments}")
        assert parsed.metrics_port == 9401
        assert parsed.health_port == 8081
        assert parsed.busy_interval == 0.5
        assert parsed.log_format == "plain"
