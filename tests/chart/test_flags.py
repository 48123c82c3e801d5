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
from typing import Any

import pytest

from segue.operator import cli
from segue.operator.image import KSTREAMS_AGENT_JAR

from .helm import container, render

# Flags that are not chart values: out-of-cluster access, help, and a debug switch
# (logLevel=debug covers it; extraArgs can still pass it).
# --kstreams-agent-jar: where the operator's own image keeps the jar, not a choice
NOT_VALUES = {"--kubeconfig", "--help", "--verbose", "--kstreams-agent-jar"}
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


def settings_for(values: dict[str, Any]) -> Any:
    """The operator's settings from the chart's arguments, as ``segue operator`` builds them."""
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    arguments = rendered_args(values)
    for variable, value in POD_ENV.items():
        arguments = [a.replace(variable, value) for a in arguments]
    try:
        return cli.settings_from(parser.parse_args(arguments))
    except SystemExit:
        pytest.fail(f"segue operator refuses the chart's arguments {arguments}")


def test_the_operator_reads_the_defaults_the_chart_documents() -> None:
    settings = settings_for({})
    assert settings.namespaces == ()
    assert settings.bind_address == "10.0.0.7"
    assert (settings.metrics_port, settings.health_port) == (9401, 8081)
    assert (settings.log_level, settings.log_format) == ("info", "plain")
    assert settings.history_topic == ""  # off
    # the agent comes from the operator's own image, at the path the Dockerfile puts it
    assert settings.kstreams_agent.image == "segue:0.1.0"
    assert settings.kstreams_agent.jar == KSTREAMS_AGENT_JAR
    election = settings.leader_election
    assert election.enabled
    assert (election.lease_name, election.lease_namespace) == ("demo-segue", "segue-system")
    assert election.identity == "demo-segue-0"


def test_the_operator_reads_every_value_given() -> None:
    settings = settings_for(
        {
            "watchNamespaces": ["team-a", "team-b"],
            "logLevel": "warning",
            "logFormat": "json",
            "metrics": {"port": 9500},
            "health": {"port": 8082},
            "history": {"topic": "segue-history"},
            "settings": {
                "busyInterval": 0.25,
                "idleInterval": 7,
                "errorBackoff": 3,
                "scrapeTimeout": 1.5,
                "kafkaTimeout": 20,
                "scrapeWorkers": 4,
            },
            "leaderElection": {"leaseDuration": 30, "renewDeadline": 20.5, "retryPeriod": 4},
        }
    )
    assert settings.namespaces == ("team-a", "team-b")
    assert (settings.log_level, settings.log_format) == ("warning", "json")
    assert (settings.metrics_port, settings.health_port) == (9500, 8082)
    assert settings.history_topic == "segue-history"
    timing = (
        settings.busy_interval,
        settings.idle_interval,
        settings.error_backoff,
        settings.scrape_timeout,
        settings.kafka_timeout,
        settings.scrape_workers,
    )
    assert timing == (0.25, 7, 3, 1.5, 20, 4)
    election = settings.leader_election
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        30,
        20.5,
        4,
    )


def test_leader_election_off_reaches_the_operator() -> None:
    assert not settings_for({"leaderElection": {"enabled": False}}).leader_election.enabled
