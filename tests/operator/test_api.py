"""The StreamApp models (segue.operator.api), without a cluster: defaults, the
camelCase wire format, errors that name the field, and the committed CRD matching
the models. ``test_crd.py`` checks the same contract against the API server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from segue.operator.api import (
    InvalidStreamApp,
    StreamApp,
    StreamAppSpec,
    StreamAppStatus,
    render_crd,
)

CRD_FILE = Path(__file__).resolve().parents[2] / "crds" / "streamapp.yaml"
Manifest = Callable[..., dict[str, Any]]


def rejected(obj: dict[str, Any]) -> InvalidStreamApp:
    with pytest.raises(InvalidStreamApp) as caught:
        StreamApp.from_object(obj)
    return caught.value


def test_defaults_are_filled(manifest: Manifest) -> None:
    spec = StreamApp.from_object(manifest()).spec
    assert spec.replicas == 1
    assert spec.metrics_port == 9400
    assert spec.state_dir == "/var/lib/segue/state"
    assert spec.topology is None
    assert spec.kafka.credentials_secret is None
    assert spec.runtime == "segue"
    assert spec.scaling.acceptable_recovery_lag == 10000
    assert spec.scaling.max_warmup_replicas == 2
    assert spec.scaling.num_standby_replicas == 0
    assert spec.scaling.scale_down_timeout_seconds == 600
    assert spec.scaling.registration_timeout_seconds == 300
    assert spec.scaling.expansion_timeout_seconds == 30
    assert spec.scaling.balance_tolerance == 0
    assert spec.scaling.learner_promotion == "eager"
    assert spec.state.retention == "Delete"
    assert spec.state.volume_claim is None  # an emptyDir
    assert spec.template.env == []
    assert spec.template.command is None


def test_nested_defaults_are_filled(full_spec: dict[str, Any]) -> None:
    full_spec["state"] = {"volumeClaim": {}}
    full_spec["topology"] = {"subTopologies": [{"id": 0, "sourceTopics": ["a"]}]}
    full_spec["template"]["ports"] = [{"containerPort": 80}]
    spec = StreamAppSpec.model_validate(full_spec)
    assert spec.state.retention == "Delete"
    assert spec.state.volume_claim is not None
    assert spec.state.volume_claim.size == "1Gi"
    assert spec.state.volume_claim.access_modes == ["ReadWriteOnce"]
    assert spec.topology is not None
    assert spec.topology.sub_topologies[0].stores == []
    assert spec.template.ports[0].protocol == "TCP"


def test_camel_case_round_trip(manifest: Manifest, full_spec: dict[str, Any]) -> None:
    obj = manifest(**full_spec)
    app = StreamApp.from_object(obj)
    assert app.spec.template.image_pull_policy == "IfNotPresent"
    assert app.spec.scaling.learner_promotion == "batch"
    assert app.spec.template.resources.limits == {"cpu": 2}
    assert app.spec.template.env[1].value_from == {"secretKeyRef": {"name": "t", "key": "token"}}
    assert app.to_object() == obj
    assert StreamApp.from_object(app.to_object()) == app


def test_python_names_are_accepted_and_written_as_camel_case() -> None:
    spec = StreamAppSpec.model_validate(
        {
            "application_id": "a",
            "kafka": {"bootstrap_servers": "k:9092"},
            "template": {"image": "i", "image_pull_policy": "Never"},
        }
    )
    dumped = spec.model_dump(mode="json", exclude_none=True)
    assert dumped["applicationId"] == "a"
    assert dumped["kafka"] == {"bootstrapServers": "k:9092"}
    assert dumped["template"]["imagePullPolicy"] == "Never"
    assert "application_id" not in dumped


def test_status_round_trip(manifest: Manifest, full_status: dict[str, Any]) -> None:
    status = StreamAppStatus.model_validate(full_status)
    assert status.scaling is not None
    assert status.scaling.handovers["1_2"].to == "wordcount-2"
    assert status.model_dump(mode="json", exclude_none=True) == full_status
    assert StreamApp.from_object({**manifest(), "status": full_status}).status == status


def test_a_bad_field_is_rejected_by_name(
    manifest: Manifest, bad_spec: tuple[dict[str, Any], str]
) -> None:
    changes, field = bad_spec
    assert field in [path for path, _ in rejected(manifest(**changes)).errors]


def test_the_message_names_the_field(manifest: Manifest) -> None:
    message = str(rejected(manifest(scaling={"learnerPromotion": "lazy"})))
    assert "spec.scaling.learnerPromotion: Input should be 'eager' or 'batch'" in message


def test_missing_and_unknown_fields_are_named(manifest: Manifest) -> None:
    obj = manifest(scaling={"scaleDownTimeout": 5})  # a typo of scaleDownTimeoutSeconds
    del obj["spec"]["applicationId"]
    errors = dict(rejected(obj).errors)
    assert errors["spec.applicationId"] == "Field required"
    assert errors["spec.scaling.scaleDownTimeout"] == "Extra inputs are not permitted"


def test_duplicate_sub_topology_ids_are_rejected(manifest: Manifest) -> None:
    subs = [{"id": 1, "sourceTopics": ["a"]}, {"id": 1, "sourceTopics": ["b"]}]
    errors = dict(rejected(manifest(topology={"subTopologies": subs})).errors)
    assert "duplicate sub-topology id 1" in errors["spec.topology"]


def test_env_value_and_value_from_are_exclusive(manifest: Manifest) -> None:
    env = [{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]
    errors = dict(rejected(manifest(template={"image": "i", "env": env})).errors)
    assert "not both" in errors["spec.template.env[0]"]


def test_status_times_must_be_rfc3339(manifest: Manifest) -> None:
    for bad in ("yesterday", "2025-01-31", "2025-01-31T12:00:00", "2025-13-01T00:00:00Z"):
        status = {"scaling": {"joining": {"wordcount-2": bad}}}
        paths = [p for p, _ in rejected({**manifest(), "status": status}).errors]
        assert paths == ["status.scaling.joining.wordcount-2"], bad


def test_spec_is_frozen_and_status_is_not(manifest: Manifest) -> None:
    app = StreamApp.from_object(manifest())
    with pytest.raises(ValueError, match="frozen"):
        app.spec.replicas = 2  # type: ignore[misc]
    status = StreamAppStatus()
    status.replicas = 2
    assert status.model_dump(exclude_none=True) == {"replicas": 2}


def test_the_documented_example_is_valid() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "streamapp.md"
    example = yaml.safe_load(doc.read_text().split("```yaml\n")[1].split("```")[0])
    app = StreamApp.from_object(example)
    assert app.spec.replicas == 3
    assert app.spec.state.volume_claim is not None


def test_committed_crd_matches_the_models() -> None:
    committed = yaml.safe_load(CRD_FILE.read_text())
    assert render_crd() == committed, (
        f"crds/{CRD_FILE.name} is out of date with segue.operator.api: run `make crds`"
    )


def test_crd_check_command_reports_drift(tmp_path: Path) -> None:
    module = [sys.executable, "-m", "segue.operator.api.crd"]
    current = subprocess.run(
        [*module, "--check", str(CRD_FILE)], capture_output=True, text=True, check=False
    )
    assert current.returncode == 0, current.stdout + current.stderr
    assert current.stderr == ""  # no runpy double-import warning either
    stale = tmp_path / "streamapp.yaml"
    stale.write_text(CRD_FILE.read_text().replace("default: 600\n", "default: 60\n"))
    drifted = subprocess.run(
        [*module, "--check", str(stale)], capture_output=True, text=True, check=False
    )
    assert drifted.returncode == 1
    removed = [line for line in drifted.stdout.splitlines() if line.startswith("-")]
    assert any(line.endswith(" default: 60") for line in removed), drifted.stdout
    assert "make crds" in drifted.stderr


def test_crd_schema_is_structural() -> None:
    """Every level has a type (or is int-or-string), with no JSON Schema leftovers
    the API server would refuse."""
    schema = render_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]

    def walk(node: dict[str, Any], at: str) -> None:
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        assert not {"$ref", "$defs", "title", "const"} & node.keys(), at
        assert "anyOf" not in node or int_or_string, at
        assert "type" in node or int_or_string, at
        assert node.get("type") != "null", at
        assert node.get("default", ...) is not None, at
        assert node.get("additionalProperties") is not False, at
        for name, sub in node.get("properties", {}).items():
            walk(sub, f"{at}.{name}")
        if "items" in node:
            walk(node["items"], f"{at}[]")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{at}.*")

    walk(schema, "")
    spec = schema["properties"]["spec"]["properties"]
    assert spec["scaling"]["default"] == {}  # the API server fills in the nested defaults
    assert spec["state"]["default"] == {}
    template = spec["template"]["properties"]
    value_from = template["env"]["items"]["properties"]["valueFrom"]
    assert value_from["type"] == "object"
    assert value_from["x-kubernetes-preserve-unknown-fields"] is True
    quantity = template["resources"]["properties"]["requests"]["additionalProperties"]
    assert quantity["x-kubernetes-int-or-string"] is True
    assert "type" not in quantity


def test_the_kafka_streams_manifest_in_the_docs_is_a_valid_streamapp() -> None:
    """docs/kafka-streams.md, "The StreamApp": what a user copies must be accepted."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "kafka-streams.md").read_text()
    section = text.split("### The StreamApp", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    app = StreamApp.from_object(yaml.safe_load(block))
    assert app.spec.runtime == "kafka-streams"
    assert app.spec.topology is None  # the plugin reports it
