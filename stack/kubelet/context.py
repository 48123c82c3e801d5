"""What every pod's supervisor shares: the node's identity, settings and services.

``runner.PodRunner`` builds one :class:`NodeContext` and hands it to each
``supervisor.PodSupervisor``; keeping it here (not in ``runner``) spares the
two an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from segue.stack.kubelet.api import Api
from segue.stack.kubelet.claims import ClaimManager
from segue.stack.kubelet.events import EventRecorder
from segue.stack.kubelet.ipam import LoopbackIpam
from segue.stack.kubelet.podspec import service_env

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"


@dataclass
class NodeContext:
    api: Api
    node_name: str
    host_ip: str
    apiserver_host: str
    apiserver_port: int
    ca_file: Path
    pods_root: Path
    claims: ClaimManager
    events: EventRecorder
    ipam: LoopbackIpam
    base_env: Mapping[str, str]
    allocatable: Mapping[str, str]
    backoff_base: float
    backoff_cap: float
    stop_grace: float
    content_refresh: float
    tick: float = 0.1
    # (namespace, pod) -> variables set over the container's own: PodRunner.env_overrides
    overrides: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    service: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.service = service_env(self.apiserver_host, self.apiserver_port)

    @property
    def backoff_reset(self) -> float:
        """A container that ran this long restarts without back-off (kubelet: 2x the cap)."""
        return 2 * self.backoff_cap

    def config_map(self, namespace: str, name: str) -> dict[str, bytes] | None:
        data = self.api.config_map_data(namespace, name)
        if data is None and name == ROOT_CA_CONFIGMAP:
            # Not yet published in a brand-new namespace: the CA it would hold.
            return {"ca.crt": self.ca_file.read_bytes()}
        return data

    def secret(self, namespace: str, name: str) -> dict[str, bytes] | None:
        return self.api.secret_data(namespace, name)
