"""PersistentVolumeClaims: a directory per claim, and a tiny provisioner.

A claim's data lives in ``<root>/claims/<namespace>_<claim>_<claim uid>``: it
outlives every pod that mounts it (``volumes`` creates it on first mount) and is
removed when the claim is deleted from the API. Keying by UID means a claim
deleted and recreated under the same name starts empty, as a new volume would.

With ``provision`` on (the default), each Pending claim also gets a
PersistentVolume pre-bound to it (hostPath = the claim's directory, pinned to
this node), which the controller-manager's PV binder binds, so the claim turns
``Bound`` as with a dynamic provisioner. The PV is deleted with its claim.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from segue.stack.kubelet.api import Api
from segue.stack.kubelet.podspec import instance_name
from segue.stack.kubelet.watch import Watcher

Obj = dict[str, Any]
log = logging.getLogger(__name__)
PROVISIONER = "segue.dev/pod-runner"


def claim_path(root: Path, namespace: str, name: str, uid: str) -> Path:
    return root / instance_name(namespace, name, uid)


class ClaimManager:
    def __init__(
        self, api: Api, root: Path, node_name: str, *, provision: bool, resync: float
    ) -> None:
        self.api = api
        self.root = root
        self.node_name = node_name
        self.provision = provision
        self._provisioned: set[str] = set()
        self.watcher = Watcher(
            api,
            "/api/v1/persistentvolumeclaims",
            on_sync=self._sync,
            on_event=self._event,
            resync=resync,
            name="pod-runner-claims",
        )

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.watcher.start()

    def stop(self) -> None:
        self.watcher.stop()

    def directory(self, namespace: str, name: str) -> Path:
        """The claim's directory, created if needed. KeyError if the claim does not exist."""
        claim = self.api.get_or_none(
            f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
        )
        if claim is None:
            raise KeyError(f'persistentvolumeclaim "{name}" not found')
        path = claim_path(self.root, namespace, name, claim["metadata"]["uid"])
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _sync(self, claims: list[Obj]) -> None:
        alive = {c["metadata"]["uid"] for c in claims}
        for path in self.root.iterdir() if self.root.exists() else []:
            namespace, name, uid = [*path.name.split("_"), "", "", ""][:3]
            if uid not in alive and not self._exists(namespace, name, uid):
                self._remove(path)
        for claim in claims:
            self._event("ADDED", claim)

    def _event(self, kind: str, claim: Obj) -> None:
        meta = claim["metadata"]
        if kind == "DELETED":
            self._remove(claim_path(self.root, meta["namespace"], meta["name"], meta["uid"]))
            self._delete_volume(meta["uid"])
            self._provisioned.discard(meta["uid"])
        elif self.provision and not meta.get("deletionTimestamp"):
            spec = claim.get("spec") or {}
            if (
                not spec.get("volumeName")
                and not spec.get("selector")
                and not spec.get("dataSource")
            ):
                phase = (claim.get("status") or {}).get("phase", "Pending")
                if phase == "Pending" and meta["uid"] not in self._provisioned:
                    self._provision(claim)

    def _exists(self, namespace: str, name: str, uid: str) -> bool:
        """Double-check a claim missing from a list: it may be newer than the list."""
        claim = self.api.get_or_none(
            f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
        )
        return claim is not None and claim["metadata"]["uid"] == uid

    def _remove(self, path: Path) -> None:
        if path.exists():
            log.info("claim gone, removing %s", path)
            shutil.rmtree(path, ignore_errors=True)

    def _provision(self, claim: Obj) -> None:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        path = claim_path(self.root, meta["namespace"], meta["name"], meta["uid"])
        path.mkdir(parents=True, exist_ok=True)
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        volume = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": f"segue-{meta['uid']}",
                "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
                "labels": {"segue.dev/claim-uid": meta["uid"]},
            },
            "spec": {
                "capacity": {"storage": storage},
                "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",  # the runner deletes it with the claim
                "storageClassName": spec.get("storageClassName") or "",
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "hostPath": {"path": str(path), "type": "DirectoryOrCreate"},
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [self.node_name],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }
        try:
            self.api.request("POST", "/api/v1/persistentvolumes", body=volume)
            self._provisioned.add(meta["uid"])
        except ApiException as exc:
            if exc.status == 409:
                self._provisioned.add(meta["uid"])
            else:
                log.warning(
                    "could not provision a volume for %s/%s: %s",
                    meta["namespace"],
                    meta["name"],
                    exc,
                )

    def _delete_volume(self, claim_uid: str) -> None:
        try:
            self.api.request("DELETE", f"/api/v1/persistentvolumes/segue-{claim_uid}")
        except ApiException as exc:
            if exc.status != 404:
                log.warning("could not delete volume segue-%s: %s", claim_uid, exc)
