"""A Kafka Streams pod whose ``segue-agent`` init container cannot copy the agent jar
(docs/kafka-streams.md, "What the operator adds to the pod"): the glue says
``AgentMissing``, naming the jar, the image and the flag, and the agent the operator
injects is part of the pod template hash, so a fixed flag rolls the pods it built."""

from __future__ import annotations

import argparse

import pytest

from segue.operator import cli
from segue.operator.act import agent, objects
from segue.operator.api.names import TEMPLATE_HASH_LABEL
from segue.operator.image import KSTREAMS_AGENT_JAR, KSTREAMS_AGENT_JAR_ENV
from segue.operator.kstreams.group import Group
from segue.operator.kstreams.pods import AGENT_MISSING, agent_missing, observe_pods
from segue.operator.observe.pods import InitFailure, PodState
from segue.operator.settings import KafkaStreamsAgent

from .test_objects import spec

JAR = "/opt/segue/segue-kstreams.jar"


def stuck(container: str = agent.AGENT_VOLUME, message: str = "") -> PodState:
    failed = InitFailure(container, "segue:0.1.0", ("cp", JAR, "$(SEGUE_POD_ROOT)/x"), 1, message)
    return PodState("ks-0", "Pending", None, False, False, 0, "u", None, {}, failed)


def test_a_failed_agent_copy_names_the_jar_the_image_and_the_flag() -> None:
    fault = agent_missing(stuck())
    assert fault is not None
    assert fault.reason == AGENT_MISSING == "AgentMissing"
    assert JAR in fault.message
    assert "image segue:0.1.0" in fault.message
    assert "--kstreams-agent-jar" in fault.message
    assert "exit code 1)" in fault.message
    said = agent_missing(stuck(message="cp: cannot stat '/opt/segue/segue-kstreams.jar'"))
    assert said is not None
    assert "exit code 1: cp: cannot stat '/opt/segue/segue-kstreams.jar')" in said.message
    assert agent_missing(stuck("another-init")) is None  # not the agent's copy
    healthy = PodState("ks-1", "Running", "127.0.2.1", True, False, 0, "u", None)
    assert agent_missing(healthy) is None


def test_the_glue_gives_each_pod_its_start_fault() -> None:
    pods = observe_pods({"ks-0": stuck()}, {}, Group(None, None), None, {})
    assert pods["ks-0"].start_fault == agent_missing(stuck())
    assert not pods["ks-0"].running


def test_the_agent_is_part_of_a_kafka_streams_pods_template_hash() -> None:
    streams = spec(runtime="kafka-streams")
    wrong = KafkaStreamsAgent(image="segue:0.1.0", jar=KSTREAMS_AGENT_JAR)
    fixed = KafkaStreamsAgent(image="segue:0.1.0", jar="/work/kstreams/target/a.jar")
    assert objects.template_hash(streams, wrong) != objects.template_hash(streams, fixed)
    newer = KafkaStreamsAgent(image="segue:0.2.0", jar=KSTREAMS_AGENT_JAR)
    assert objects.template_hash(streams, wrong) != objects.template_hash(streams, newer)
    built = objects.pod("ks", "u", "ks-0", streams, agent=fixed)
    assert built["metadata"]["labels"][TEMPLATE_HASH_LABEL] == objects.template_hash(streams, fixed)
    # Segue's own worker gets no agent: its hash, and its pods, stay as they were
    own = spec()
    assert objects.template_hash(own, fixed) == objects.template_hash(own)
    assert objects.pod("wc", "u", "wc-0", own, agent=fixed) == objects.pod("wc", "u", "wc-0", own)


def agent_jar(*arguments: str) -> str:
    parser = argparse.ArgumentParser()
    cli.configure(parser)  # the default is read as the parser is built
    return str(cli.settings_from(parser.parse_args(list(arguments))).kstreams_agent.jar)


def test_the_jar_defaults_to_the_images_path_unless_the_environment_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KSTREAMS_AGENT_JAR_ENV, raising=False)
    assert agent_jar() == KSTREAMS_AGENT_JAR
    monkeypatch.setenv(
        KSTREAMS_AGENT_JAR_ENV, "/checkout/kstreams/target/a.jar"
    )  # the pod runner's
    assert agent_jar() == "/checkout/kstreams/target/a.jar"
    assert agent_jar("--kstreams-agent-jar", "/flag.jar") == "/flag.jar"  # the flag wins
