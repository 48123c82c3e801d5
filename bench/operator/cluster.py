"""The operator benchmarks' cluster: one local stack (Kafka, the Kubernetes control plane,
the pod runner) with the StreamApp CRD installed, and a fresh namespace per run. Used by
``scaling`` and by ``bench.kstreams`` (Segue's side of the Kafka Streams comparison)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from segue.stack.localstack import LocalStack

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def operator_stack() -> Iterator[tuple[LocalStack, Any]]:
    """The started stack and an API client of its control plane, CRD installed."""
    from kubernetes import config, utils

    with LocalStack() as stack:
        assert stack.kube is not None
        api = config.new_client_from_config(config_file=str(stack.kube.kubeconfig))
        try:
            utils.create_from_yaml(api, str(ROOT / "crds" / "streamapp.yaml"))
            time.sleep(2)
            yield stack, api
        finally:
            api.close()


def new_namespace(api: Any, name: str) -> None:
    from kubernetes import client

    client.CoreV1Api(api).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=name))
    )
    time.sleep(2)  # the ServiceAccount controller creates the default account
