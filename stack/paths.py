"""Where the pinned binaries of the local stack live.

``stack/install/*.sh`` build or download them into ``$SEGUE_CACHE`` (default
``~/.cache/segue``); this module reads the same ``versions.env`` so Python and the
install scripts can never disagree on a version.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from segue.stack.process import StackError

INSTALL_DIR = Path(__file__).resolve().parent / "install"
# The Kafka Streams plugin's jar as make builds it (the Makefile's KSTREAMS_JAR): the
# agent the local stack's pods get (segue.stack.kubelet.image)
KSTREAMS_JAR = (
    Path(__file__).resolve().parents[1] / "kstreams" / "target" / "segue-kstreams-0.1.0.jar"
)


def read_versions(path: Path = INSTALL_DIR / "versions.env") -> dict[str, str]:
    versions: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            versions[key.strip()] = value.strip()
    return versions


def cache_dir() -> Path:
    return Path(os.environ.get("SEGUE_CACHE") or Path.home() / ".cache" / "segue")


@dataclass(frozen=True)
class Binaries:
    """Resolved locations of everything the stack runs."""

    kafka_libs: Path
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kubectl: Path
    helm: Path
    java: Path

    @classmethod
    def locate(cls) -> Binaries:
        v = read_versions()
        root = cache_dir()
        kube = root / f"kubernetes-{v['KUBERNETES_VERSION']}"
        found = cls(
            kafka_libs=root / f"kafka-{v['KAFKA_VERSION']}" / "libs",
            etcd=root / f"etcd-{v['ETCD_VERSION']}" / "bin" / "etcd",
            kube_apiserver=kube / "bin" / "kube-apiserver",
            kube_controller_manager=kube / "bin" / "kube-controller-manager",
            kubectl=kube / "bin" / "kubectl",
            helm=root / f"helm-{v['HELM_VERSION']}" / "bin" / "helm",
            java=Path(shutil.which("java") or "/usr/bin/java"),
        )
        missing = [str(p) for p in found.__dict__.values() if not Path(p).exists()]
        if missing:
            raise StackError(
                "the local stack is not installed (missing: "
                + ", ".join(missing)
                + "); run `make stack` (make test and make demo do it for you)"
            )
        return found
