"""examples/wordcount.yaml, which the docs and NOTES.txt point at, is a valid StreamApp
that runs an app the image really contains."""

from __future__ import annotations

import importlib
from typing import Any

import yaml

from segue.operator.api import StreamApp
from segue.worker import Topology

from .helm import ROOT

EXAMPLE = ROOT / "examples" / "wordcount.yaml"


def load() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return loaded


def test_the_example_is_a_valid_streamapp() -> None:
    app = StreamApp.from_object(load())
    assert app.metadata["name"] == "wordcount"
    assert app.spec.replicas == 2


def test_the_example_names_the_built_in_wordcount_app() -> None:
    template = load()["spec"]["template"]
    assert template["command"] == ["segue", "worker"]
    arguments = template["args"]
    target = arguments[arguments.index("--app") + 1]
    module, _, name = target.partition(":")
    assert module == "segue.worker.apps.wordcount"
    built = getattr(importlib.import_module(module), name)()
    assert isinstance(built, Topology)
    assert built.application_id == load()["spec"]["applicationId"]


def test_the_credentials_secret_example_is_valid_once_uncommented() -> None:
    text = EXAMPLE.read_text()
    assert "# credentialsSecret:" in text
    obj = load()
    obj["spec"]["kafka"]["credentialsSecret"] = {"name": "wordcount-kafka"}
    assert StreamApp.from_object(obj).spec.kafka.credentials_secret is not None
