"""Paths and in-cluster credentials that work in a real pod and under the pod runner.

In a real cluster a container sees its volumes at their mount paths and its
ServiceAccount token at /var/run/secrets/kubernetes.io/serviceaccount. The test
suite's pod runner (``segue.stack.kubelet``) has no container runtime, so no
mount namespace: it runs each container as a plain process, sets
``SEGUE_POD_ROOT`` to the container's root directory on the host and makes
every mount path a symlink under it. A path ``P`` inside the pod is therefore
``$SEGUE_POD_ROOT/P`` on the host.

Code that runs in pods (the worker, the operator) reads its files through
:func:`pod_path` and loads its Kubernetes credentials with
:func:`load_incluster_config`, so the very same code uses the real in-cluster
path in a cluster and the mapped one in tests -- with a real token of the pod's
own ServiceAccount either way, so RBAC is exercised for real, not bypassed by a
kubeconfig. This module must stay tiny and import nothing from ``segue.stack``:
it ships in the image.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the worker reads its paths without the client
    from kubernetes import client

POD_ROOT_ENV = "SEGUE_POD_ROOT"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the kubelet mounts a pod's ServiceAccount: its token, CA and namespace."""
TOKEN_FILE = f"{SERVICE_ACCOUNT_DIR}/token"
CA_FILE = f"{SERVICE_ACCOUNT_DIR}/ca.crt"
NAMESPACE_FILE = f"{SERVICE_ACCOUNT_DIR}/namespace"


def pod_path(path: str) -> str:
    """Where the pod's absolute ``path`` is for this process: under
    ``$SEGUE_POD_ROOT`` when the pod runner set it, ``path`` itself otherwise."""
    root = os.environ.get(POD_ROOT_ENV)
    if not root:
        return path
    return os.path.join(root, path.lstrip("/"))


def load_incluster_config(
    configuration: client.Configuration | None = None,
) -> client.Configuration:
    """The in-cluster client configuration: apiserver from
    ``KUBERNETES_SERVICE_HOST``/``_PORT``, the ServiceAccount token and CA from
    their standard paths (through :func:`pod_path`). The token is re-read from
    its file as the kubelet (or the pod runner) refreshes it.

    Returns ``configuration`` (a new one if None) filled in; it does not change
    the client's global default.
    """
    from kubernetes import client
    from kubernetes.config.incluster_config import InClusterConfigLoader

    target = configuration if configuration is not None else client.Configuration()
    loader_class: Any = InClusterConfigLoader  # untyped in the client
    loader = loader_class(token_filename=pod_path(TOKEN_FILE), cert_filename=pod_path(CA_FILE))
    loader.load_and_set(target)
    return target


def new_incluster_client() -> client.ApiClient:
    """An ApiClient with the pod's own in-cluster credentials."""
    from kubernetes import client

    return client.ApiClient(load_incluster_config())


def pod_namespace() -> str | None:
    """The namespace of the pod this process runs in (None outside a pod)."""
    try:
        with open(pod_path(NAMESPACE_FILE), encoding="utf-8") as file:
            return file.read().strip() or None
    except OSError:
        return None
