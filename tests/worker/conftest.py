"""Fixtures for the worker's integration tests: worker processes that are always
cleaned up, and a helper to publish assignments to the test's namespace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import WorkerProcess, assignment, publish


@pytest.fixture
def spawn(
    tmp_path: Path, kafka: Any, kube: Any, namespace: str
) -> Iterator[Callable[..., WorkerProcess]]:
    """``spawn(app, member, configmap, app_args=..., state_dir=..., extra=...)``
    starts a worker subprocess against the session's Kafka and API server."""
    started: list[WorkerProcess] = []

    def make(
        app: str,
        member: str,
        configmap: str,
        *,
        app_args: dict[str, str] | None = None,
        state_dir: Path | None = None,
        extra: list[str] | None = None,
        kubeconfig: Path | None = None,
    ) -> WorkerProcess:
        worker = WorkerProcess(
            app=app,
            member=member,
            namespace=namespace,
            configmap=configmap,
            bootstrap=kafka.bootstrap_servers,
            state_dir=state_dir or tmp_path / "state" / member,
            kubeconfig=kubeconfig or kube.kubeconfig,
            log_dir=tmp_path,
            app_args=app_args,
            extra=extra,
        )
        started.append(worker)
        return worker.start()

    yield make
    for worker in started:
        worker.close()


@pytest.fixture
def assign(kube_api: Any, namespace: str) -> Callable[..., None]:
    """``assign(configmap, application_id, generation, {member: {role: [tasks]}})``."""

    def publish_generation(
        configmap: str,
        application_id: str,
        generation: int,
        members: dict[str, dict[str, list[str]]],
        partition_map: dict[str, dict[str, int]] | None = None,
    ) -> None:
        document = assignment(application_id, generation, members, partition_map)
        publish(kube_api, namespace, configmap, document)

    return publish_generation
