"""A Kafka broker (and, when asked, a Kubernetes control plane) for the worker
benchmarks: the same ``segue.stack`` classes the tests use, in a temp dir."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from segue.stack import KafkaBroker, KubeControlPlane
from segue.stack.paths import Binaries


@contextlib.contextmanager
def local_stack(kube: bool) -> Iterator[tuple[KafkaBroker, Any]]:
    with tempfile.TemporaryDirectory(prefix="segue-bench-") as tmp:
        root = Path(tmp)
        binaries = Binaries.locate()
        broker = KafkaBroker(root / "kafka", binaries)
        (root / "kafka").mkdir()
        plane = None
        try:
            broker.start()
            if kube:
                (root / "kube").mkdir()
                plane = KubeControlPlane(root / "kube", binaries)
                plane.start()
            yield broker, plane
        finally:
            if plane is not None:
                plane.stop()
            broker.stop()
