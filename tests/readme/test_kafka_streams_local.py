"""docs/kafka-streams.md, "On the local stack", typed as a newcomer types it after the
README's setup commands: one terminal runs README.md's ``segue stack up``; another types
the section's lines, each heredoc as one paste: the chart installed as the README writes
it (no agent flag: the pod runner's image names the jar make built), the example built
with Maven, its properties file, the topics, a StreamApp whose command names this
machine's jars, a wait until it runs, lines in and counts out, a scale to 3 watched until
it runs again (then Ctrl-C). The pods must have copied this checkout's agent jar, and
the app must end balanced on 3 pods, through learners, never ``Degraded``.

Every command comes from the doc itself (:func:`commands`); only the newcomer's Maven
repository is set, to the one make filled (``$SEGUE_CACHE/m2``), so the build needs no
network.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from kubernetes import config

from segue.stack.apps import Apps
from segue.stack.paths import KSTREAMS_JAR, cache_dir

from .readme import ROOT, Terminal, block, user_env

pytestmark = [pytest.mark.e2e, pytest.mark.kstreams, pytest.mark.timeout(900)]
DOC = ROOT / "docs" / "kafka-streams.md"
SECTION = "### On the local stack"
APP = "wordcount-streams"


def commands() -> list[str]:
    """The section's shell block as a user pastes it: one command per line, a heredoc
    with its lines as one (comment-only and blank lines outside heredocs left out)."""
    section = re.split(r"\n#{1,3} ", DOC.read_text().split(f"\n{SECTION}\n", 1)[1])[0]
    shell = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    found: list[str] = []
    heredoc: list[str] | None = None
    end = ""
    for line in shell.splitlines():
        if heredoc is not None:
            heredoc.append(line)
            if line == end:
                found.append("\n".join(heredoc))
                heredoc = None
        elif line.strip() and not line.lstrip().startswith("#"):
            opens = re.search(r"<<'?(\w+)'?$", line)
            if opens:
                heredoc, end = [line], opens.group(1)
            else:
                found.append(line.strip())
    assert heredoc is None, f"a heredoc of {SECTION!r} does not end"
    return found


def test_the_section_is_the_walkthrough_it_says() -> None:
    lines = commands()
    helm = lines[1].split("#")[0].strip()
    assert helm == "helm install segue charts/segue -n segue-system --create-namespace"
    assert helm in (ROOT / "README.md").read_text()  # as the README writes it
    assert "--kstreams-agent-jar" not in "\n".join(lines)
    assert [c.split()[0] for c in lines if "<<" in c] == ["cat", "kubectl"]


def diagnose(apps: Apps, workdir: str) -> str:
    """The app's status and events, and the tail of each operator pod's log."""
    logs = sorted(Path(workdir).glob("**/segue-system_*/logs/operator/*.log"))
    tails = [f"--- {log.parent.parent.parent.name}\n{log.read_text()[-6000:]}" for log in logs]
    return "\n".join([str(apps.get(APP).get("status")), str(apps.events(APP)[-20:]), *tails])


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in reversed(opened):
        terminal.close()


def stack_up(env: dict[str, str], tmp_path: Path, terminals: list[Terminal]) -> tuple[str, float]:
    """README.md's ``segue stack up`` in a first terminal: its work dir, seconds to ready."""
    first = Terminal(env, tmp_path / "terminal-1.log")
    terminals.append(first)
    activate, up = block("Running the operator", 0)
    began = time.monotonic()
    first.run(activate)
    first.start(up)
    workdir = first.expect(r"work dir (\S+),", timeout=240).group(1)
    first.expect(r"Press Ctrl-C to stop\.", timeout=240)
    return workdir, time.monotonic() - began


def ran_as_documented(apps: Apps) -> None:
    """Balanced on 3 pods, through learners, each pod's agent copied from this checkout."""
    assert apps.balanced(APP, 3), apps.get(APP).get("status")
    pods = apps.pods(APP)
    assert sorted(pods) == [f"{APP}-0", f"{APP}-1", f"{APP}-2"]
    for pod in pods.values():
        (init,) = pod.spec.init_containers
        assert (init.name, init.command[1]) == ("segue-agent", str(KSTREAMS_JAR))
    reasons = {reason for reason, _ in apps.events(APP)}
    assert {"LearnersAssigned", "TaskHandedOver"} <= reasons, reasons
    assert "AgentMissing" not in reasons


def test_a_kafka_streams_app_runs_on_the_local_stack_as_written(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    assert KSTREAMS_JAR.exists(), f"{KSTREAMS_JAR}: make demo or make test builds it"
    home = tmp_path / "home"
    home.mkdir()
    env = user_env(home, {"MAVEN_OPTS": f"-Dmaven.repo.local={cache_dir() / 'm2'}"})
    workdir, took = stack_up(env, tmp_path, terminals)
    timings = [("segue stack up", round(took, 1))]
    kubeconfig = home / ".kube" / "config"
    apps = Apps(config.new_client_from_config(config_file=str(kubeconfig)), "default")

    second = Terminal(env, tmp_path / "terminal-2.log")
    terminals.append(second)
    degraded: list[str] = []
    for command in commands():
        began = time.monotonic()
        if command.startswith("kubectl get sapp"):
            second.start(command)
            try:
                second.expect(rf"{APP}\s+3\s+3\s+3\s+Running", timeout=300)
            except pexpect.TIMEOUT:
                raise AssertionError(f"not Running on 3:\n{diagnose(apps, workdir)}") from None
            second.interrupt()
        else:
            out = second.run(command, timeout=420)
        timings.append((command.split("\n")[0][:60], round(time.monotonic() - began, 1)))
        if command.startswith("kafka-console-consumer.sh"):
            counts = re.findall(r"^(\w+)\t(\d+)\r?$", out, re.M)
            assert len(counts) == 5, out[-2000:]
        said = apps.condition(APP, "Degraded") if apps.exists(APP) else None
        if said is not None and said.status == "True":
            degraded.append(f"{said.reason}: {said.message}")
    ran_as_documented(apps)
    assert not [d for d in degraded if d.startswith("AgentMissing")], degraded

    stopped = terminals[0].interrupt(timeout=120)
    assert "stopped." in stopped, stopped[-3000:]
    assert not Path(workdir).exists(), f"the stack's work dir {workdir} was left"
    print("docs/kafka-streams.md, on the local stack (seconds):")
    for line, seconds in timings:
        print(f"  {seconds:6.1f}  {line}")
    print(f"  Degraded on the way: {degraded or 'never'}")
