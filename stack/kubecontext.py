"""The local stack's cluster in kubectl's own config, the way kind and minikube do it.

``segue stack up`` merges its admin kubeconfig into the file kubectl reads (the first
of ``$KUBECONFIG``, else ``~/.kube/config``) as the context ``segue-local`` and makes
it current, so ``kubectl``, ``helm`` and ``segue operator --kubeconfig ~/.kube/config``
reach the stack with nothing exported; stopping the stack takes the entries out again
and gives back the context that was current before. Entries of other names are never
touched. :mod:`.cli` is the only caller; :mod:`.kube` writes the admin kubeconfig
merged here.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONTEXT = "segue-local"
SECTIONS = ("clusters", "users", "contexts")


def kubectl_config(environ: dict[str, str] | None = None) -> Path:
    """The file kubectl writes to: the first of ``$KUBECONFIG``, else ``~/.kube/config``."""
    env = os.environ if environ is None else environ
    first = next((p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p), None)
    return Path(first).expanduser() if first else Path.home() / ".kube" / "config"


@dataclass(frozen=True)
class Merged:
    """What :func:`merge` changed, for :func:`unmerge` to undo."""

    path: Path
    created: bool  # the file did not exist before
    previous: str | None  # the current-context before


def merge(path: Path, admin: Path) -> Merged:
    """Add (or replace) ``admin``'s cluster, user and context in ``path`` under
    :data:`CONTEXT` and make it the current context."""
    created = not path.exists()
    config = _read(path)
    ours = _read(admin)
    previous = config.get("current-context") or None
    for section in SECTIONS:
        entry = dict(ours[section][0])
        entry["name"] = CONTEXT
        if section == "contexts":
            entry["context"] = {**entry["context"], "cluster": CONTEXT, "user": CONTEXT}
        kept = [e for e in config.get(section) or [] if e.get("name") != CONTEXT]
        config[section] = [*kept, entry]
    config["current-context"] = CONTEXT
    _write(path, config)
    return Merged(path, created, previous if previous != CONTEXT else None)


def unmerge(merged: Merged) -> None:
    """Take :data:`CONTEXT` out again; the context current before comes back (if it is
    still there). A file that only ever held the stack's entries is removed."""
    if not merged.path.exists():
        return
    config = _read(merged.path)
    for section in SECTIONS:
        config[section] = [e for e in config.get(section) or [] if e.get("name") != CONTEXT]
    if config.get("current-context") == CONTEXT:
        names = {e.get("name") for e in config["contexts"]}
        config["current-context"] = merged.previous if merged.previous in names else ""
    if merged.created and not any(config[s] for s in SECTIONS):
        merged.path.unlink()
        return
    _write(merged.path, config)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"apiVersion": "v1", "kind": "Config", "preferences": {}}
    loaded = yaml.safe_load(path.read_text()) or {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{path} is not a kubeconfig (not a mapping)")
    return loaded


def _write(path: Path, config: dict[str, Any]) -> None:
    """Atomically, readable by its owner only (it names a client key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as out:
        yaml.safe_dump(config, out, sort_keys=False)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
