"""ServiceAccount tokens for pods, from the TokenRequest API.

A projected ``serviceAccountToken`` source (the ``kube-api-access-*`` volume
the ServiceAccount admission plugin adds to every pod, or one the pod declares)
gets a token of the pod's own ServiceAccount, bound to the pod (so it stops
being valid when the pod is deleted), for the source's audience and
expirationSeconds, and is refreshed at 80% of its lifetime, as the kubelet's
token manager does. ``volumes`` writes the token into the volume's files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from segue.stack.kubelet.api import Api

Obj = dict[str, Any]
REFRESH_AT = 0.8  # of the token's lifetime


@dataclass(frozen=True)
class Token:
    value: str
    refresh_at: float  # time.time() after which a new token is requested


def request_token(api: Api, pod: Obj, audience: str | None, expiration_seconds: int) -> Token:
    meta = pod["metadata"]
    account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    spec: Obj = {
        "expirationSeconds": expiration_seconds,
        "boundObjectRef": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": meta["name"],
            "uid": meta["uid"],
        },
    }
    if audience:
        spec["audiences"] = [audience]
    issued = time.time()
    answer = api.request(
        "POST",
        f"/api/v1/namespaces/{meta['namespace']}/serviceaccounts/{account}/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
    )
    lifetime = float((answer.get("spec") or {}).get("expirationSeconds") or expiration_seconds)
    return Token(answer["status"]["token"], issued + REFRESH_AT * lifetime)
