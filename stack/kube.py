"""A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver and
kube-controller-manager, built from source at pinned versions.

The controller-manager matters: garbage collection of owned objects, the
ServiceAccount and token controllers, the HPA controller and PVC protection all
run for real. The node lifecycle controller is off because the pod runner
(``segue.stack.kubelet``) does not send node heartbeats; nothing else is cut.

The apiserver alone can be stopped and started again (:meth:`KubeControlPlane.
restart_apiserver`, the fault suite's API-server restart): etcd keeps running, so
every object survives, and the port and certificates stay, so clients reconnect.
Its stop is bounded: SIGTERM, then SIGKILL after ``APISERVER_GRACE`` seconds
(a draining apiserver holds long watches open well past that otherwise).
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.request
from pathlib import Path

import yaml

from segue.stack.certs import FRONT_PROXY_CLIENT, ClusterPki, KeyPair, create_pki
from segue.stack.paths import Binaries
from segue.stack.process import ManagedProcess, free_port

SERVICE_CIDR = "10.96.0.0/16"
APISERVER_GRACE = 3.0  # seconds between SIGTERM and SIGKILL when the apiserver stops
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
# Controllers that need a real kubelet's heartbeats or a cloud are disabled.
DISABLED_CONTROLLERS = (
    "node-lifecycle-controller",
    "node-ipam-controller",
    "cloud-node-lifecycle-controller",
    "node-route-controller",
    "service-lb-controller",
)


def write_kubeconfig(path: Path, server: str, ca: Path, user: KeyPair, name: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "segue-local", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [
            {
                "name": name,
                "user": {"client-certificate": str(user.cert), "client-key": str(user.key)},
            }
        ],
        "contexts": [{"name": "segue-local", "context": {"cluster": "segue-local", "user": name}}],
        "current-context": "segue-local",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path


def aggregation_flags(pki: ClusterPki) -> list[str]:
    """The aggregation layer (``APIService`` objects proxied to extension API servers).

    The apiserver presents ``front-proxy-client`` (signed by its own CA) and says who
    the user is in ``X-Remote-*`` headers; the same values land in kube-system's
    ``extension-apiserver-authentication`` ConfigMap, where extension servers read
    what to trust. No ``--enable-aggregator-routing``: the proxy then dials what the
    APIService's Service resolves to, its ClusterIP or, for an ``ExternalName``
    Service, that name, which is how a test points it at a server on loopback
    (docs/local-stack.md, "The aggregation layer").
    """
    return [
        f"--requestheader-client-ca-file={pki.front_proxy_ca.cert}",
        f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki.front_proxy_client.cert}",
        f"--proxy-client-key-file={pki.front_proxy_client.key}",
    ]


def kubelet_flags(pki: ClusterPki) -> list[str]:
    """How the apiserver reaches the pod runner's kubelet endpoint (``kubectl logs``).

    It dials the Node's InternalIP (the runner's 127.0.0.1; a Node's hostname does not
    resolve) on the port the Node publishes, and presents the admin's client
    certificate (group ``system:masters``, as kubeadm's apiserver-kubelet-client), which
    the runner checks against the cluster CA (``segue.stack.kubelet.logs``).
    """
    return [
        "--kubelet-preferred-address-types=InternalIP,Hostname",
        f"--kubelet-client-certificate={pki.admin.cert}",
        f"--kubelet-client-key={pki.admin.key}",
    ]


class KubeControlPlane:
    def __init__(self, workdir: Path, binaries: Binaries, host: str = "127.0.0.1") -> None:
        self.workdir = workdir
        self.binaries = binaries
        self.host = host
        self.etcd_port = free_port(host)
        self.etcd_peer_port = free_port(host)
        self.port = free_port(host)
        self.kcm_port = free_port(host)
        self.pki: ClusterPki | None = None
        self.kubeconfig = workdir / "admin.kubeconfig"
        self.processes: list[ManagedProcess] = []
        self.apiserver: ManagedProcess | None = None

    @property
    def server(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def ca_file(self) -> Path:
        assert self.pki is not None
        return self.pki.ca.cert

    def start(self, timeout: float = 120.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = create_pki(self.workdir / "pki")
        write_kubeconfig(
            self.kubeconfig, self.server, self.pki.ca.cert, self.pki.admin, "segue-admin"
        )
        kcm_config = write_kubeconfig(
            self.workdir / "controller-manager.kubeconfig",
            self.server,
            self.pki.ca.cert,
            self.pki.controller_manager,
            "system:kube-controller-manager",
        )
        self._start_etcd(timeout)
        self.start_apiserver(timeout)
        self._start_controller_manager(kcm_config, timeout)

    def _start_etcd(self, timeout: float) -> None:
        client = f"http://{self.host}:{self.etcd_port}"
        peer = f"http://{self.host}:{self.etcd_peer_port}"
        etcd = ManagedProcess(
            "etcd",
            [
                str(self.binaries.etcd),
                "--name=segue",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=segue={peer}",
                "--unsafe-no-fsync=true",  # a throwaway test cluster; fsync only costs time
                "--log-level=warn",
            ],
            self.workdir / "logs" / "etcd.log",
        )
        self.processes.append(etcd)
        etcd.start()

        def healthy() -> bool:
            with urllib.request.urlopen(f"{client}/health", timeout=2) as r:
                return bool(json.load(r).get("health") == "true")

        etcd.wait_ready(healthy, timeout, "healthy")

    def start_apiserver(self, timeout: float = 120.0) -> None:
        """Start the apiserver (again, after :meth:`stop_apiserver`) on the same etcd."""
        if self.apiserver is not None:
            self.apiserver.start()
            self.apiserver.wait_ready(lambda: self._get("/readyz") == "ok", timeout, "/readyz ok")
            return
        assert self.pki is not None
        pki = self.pki
        apiserver = ManagedProcess(
            "kube-apiserver",
            [
                str(self.binaries.kube_apiserver),
                f"--etcd-servers=http://{self.host}:{self.etcd_port}",
                f"--bind-address={self.host}",
                f"--advertise-address={self.host}",
                f"--secure-port={self.port}",
                f"--tls-cert-file={pki.apiserver.cert}",
                f"--tls-private-key-file={pki.apiserver.key}",
                f"--client-ca-file={pki.ca.cert}",
                f"--service-account-key-file={pki.service_account_pub}",
                f"--service-account-signing-key-file={pki.service_account_key}",
                f"--service-account-issuer={SA_ISSUER}",
                "--authorization-mode=Node,RBAC",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                # The `kubernetes` Service's endpoints may not be a loopback address.
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                "--profiling=false",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                *aggregation_flags(pki),
                *kubelet_flags(pki),
                "--v=1",
            ],
            self.workdir / "logs" / "kube-apiserver.log",
        )
        self.processes.append(apiserver)
        self.apiserver = apiserver
        apiserver.start()
        apiserver.wait_ready(lambda: self._get("/readyz") == "ok", timeout, "/readyz ok")

    def _start_controller_manager(self, kubeconfig: Path, timeout: float) -> None:
        assert self.pki is not None
        controllers = ",".join(["*", *(f"-{c}" for c in DISABLED_CONTROLLERS)])
        kcm = ManagedProcess(
            "kube-controller-manager",
            [
                str(self.binaries.kube_controller_manager),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                f"--bind-address={self.host}",
                f"--secure-port={self.kcm_port}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={self.pki.service_account_key}",
                f"--root-ca-file={self.pki.ca.cert}",
                f"--controllers={controllers}",
                "--horizontal-pod-autoscaler-sync-period=5s",
                "--v=1",
            ],
            self.workdir / "logs" / "kube-controller-manager.log",
        )
        self.processes.append(kcm)
        kcm.start()
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE

        def healthy() -> bool:
            url = f"https://{self.host}:{self.kcm_port}/healthz"
            with urllib.request.urlopen(url, timeout=2, context=insecure) as r:
                return bool(r.read().decode() == "ok")

        kcm.wait_ready(healthy, timeout, "/healthz ok")

    def _get(self, path: str) -> str:
        """GET an apiserver path as the admin."""
        assert self.pki is not None
        ctx = ssl.create_default_context(cafile=str(self.pki.ca.cert))
        ctx.load_cert_chain(str(self.pki.admin.cert), str(self.pki.admin.key))
        with urllib.request.urlopen(f"{self.server}{path}", timeout=3, context=ctx) as r:
            return str(r.read().decode())

    def stop_apiserver(self, grace: float = APISERVER_GRACE) -> None:
        """Stop the apiserver only, within ``grace`` seconds (then SIGKILL)."""
        if self.apiserver is not None:
            self.apiserver.stop(grace=grace)

    def restart_apiserver(self, downtime: float = 0.0, timeout: float = 120.0) -> float:
        """Stop the apiserver, stay down ``downtime`` seconds, start it again on the
        same etcd and port; returns the seconds from the stop until /readyz is ok."""
        began = time.monotonic()
        self.stop_apiserver()
        time.sleep(downtime)
        self.start_apiserver(timeout)
        return time.monotonic() - began

    def stop(self) -> None:
        for proc in reversed(self.processes):
            proc.stop(grace=APISERVER_GRACE if proc is self.apiserver else 10)
        self.processes.clear()
        self.apiserver = None
