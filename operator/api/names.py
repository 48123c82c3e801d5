"""Names and labels of everything the operator creates for one StreamApp, in one place.

Part of the API (users select pods by these labels and find the assignment by this
name); ``observe`` lists by them and ``act`` writes them.

Pods are ``<app>-<n>`` (the member id, stable across restarts), their state claims
``state-<app>-<n>`` (StatefulSet's convention), the assignment ConfigMap
``<app>-assignment`` (docs/protocol.md) and the workers' ServiceAccount, Role and
RoleBinding ``<app>-worker``.
"""

from __future__ import annotations

from segue.operator.api.base import GROUP
from segue.protocol.names import APP_LABEL, MANAGED_BY, MANAGER, MEMBER_LABEL, NAME_LABEL

# On the assignment ConfigMap: the identity of the operator replica that published it.
PUBLISHED_BY = f"{GROUP}/published-by"
# On each pod: the hash of the spec it was built from (a Deployment's pod-template-hash),
# so the operator knows which pods a template change has not reached yet.
TEMPLATE_HASH_LABEL = f"{GROUP}/template-hash"


def worker_account(app: str) -> str:
    return f"{app}-worker"


def claim(pod: str) -> str:
    return f"state-{pod}"


def selector(app: str) -> str:
    return f"{APP_LABEL}={app}"


def labels(app: str, member: str | None = None) -> dict[str, str]:
    out = {NAME_LABEL: app, MANAGED_BY: MANAGER, APP_LABEL: app}
    if member is not None:
        out[MEMBER_LABEL] = member
    return out
