"""Fixtures of the install tests: the chart rendered or installed by the real ``helm``
into the session's API server, and clients that act as a given ServiceAccount (the
API server's impersonation, so RBAC and admission judge exactly that identity)."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config

from segue.stack.paths import Binaries

CHART = Path(__file__).resolve().parents[2] / "charts" / "segue"


def helm(kube: Any, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``helm`` against the session's API server (its kubeconfig, no other)."""
    result = subprocess.run(
        [str(Binaries.locate().helm), "--kubeconfig", str(kube.kubeconfig), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def render(kube: Any, namespace: str, release: str, *values: str) -> list[dict[str, Any]]:
    """The chart's objects for ``release`` in ``namespace`` with ``--set`` values."""
    sets = [arg for value in values for arg in ("--set", value)]
    out = helm(kube, "template", release, str(CHART), "-n", namespace, *sets).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


@pytest.fixture
def impersonate(kube: Any) -> Iterator[Callable[[str, str], Any]]:
    """``impersonate(namespace, service_account)``: an ApiClient acting as that account."""
    made: list[Any] = []

    def make(namespace: str, account: str) -> Any:
        api = config.new_client_from_config(config_file=str(kube.kubeconfig))
        api.set_default_header("Impersonate-User", f"system:serviceaccount:{namespace}:{account}")
        made.append(api)
        return api

    yield make
    for api in made:
        api.close()


def status_of(call: Callable[[], object]) -> int:
    """The HTTP status a request answers (2xx as 200)."""
    try:
        call()
    except client.ApiException as exc:
        return int(exc.status)
    return 200


def flag(docs: list[dict[str, Any]], name: str) -> str:
    """The value of ``--name=value`` in the operator Deployment's arguments."""
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    for arg in container.get("args", []):
        if arg.startswith(f"--{name}="):
            return str(arg.split("=", 1)[1])
    raise AssertionError(f"--{name} not among {container.get('args')}")


@pytest.fixture
def spaces(kube_api: Any) -> Iterator[dict[str, str]]:
    """Three fresh namespaces: the release's, one the operator watches, one it does not."""
    core = client.CoreV1Api(kube_api)
    tag = uuid.uuid4().hex[:6]
    names = {role: f"{role}-{tag}" for role in ("release", "watched", "other")}
    for name in names.values():
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    for name in names.values():  # admission wants the default ServiceAccount for pods
        deadline = time.monotonic() + 30
        while not core.list_namespaced_service_account(
            name, field_selector="metadata.name=default"
        ).items:
            assert time.monotonic() < deadline, f"{name}: no default ServiceAccount"
            time.sleep(0.1)
    yield names
    for name in names.values():
        core.delete_namespace(name)
