"""The Kafka Streams agent in a ``runtime: kafka-streams`` pod, added to what
:func:`.objects.pod` builds for Segue's worker (docs/kafka-streams.md, "Adoption").

The app runs its own image and knows nothing of Segue but one config line
(``task.assignor.class``). What the plugin and its endpoint need comes from here: an
init container copies the agent jar from the operator's image into an emptyDir, and
``JAVA_TOOL_OPTIONS`` (read by every JVM, whatever the app's entry point) loads it as a
``-javaagent``, which also puts the assignor class on the class path. The probes ask the
agent's endpoint, since the app serves none of the worker's.

Paths are written ``$(SEGUE_POD_ROOT)/...`` with ``SEGUE_POD_ROOT`` defined empty just
before: a kubelet expands that to the mount path itself; the local stack's pod runner,
which has no mount namespaces, to where it shows the container that mount
(``segue.stack.kubelet.podspec.container_env``). Pure dict building, like ``objects``.
"""

from __future__ import annotations

import copy
from typing import Any

from segue.podenv import POD_ROOT_ENV as POD_ROOT
from segue.protocol.names import ENV_STATE_DIR, HEALTH_PATH

from .objects import http_probe

AGENT_VOLUME = "segue-agent"
AGENT_DIR = "/segue/agent"  # where the app container sees the copied jar
AGENT_FILE = "segue-kstreams.jar"
JAVA_OPTIONS = "JAVA_TOOL_OPTIONS"
_ROOTED = f"$({POD_ROOT})"
# The init container's own needs: one file copied
_COPY_RESOURCES = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}


def with_agent(
    pod: dict[str, Any], *, image: str, jar: str, metrics_port: int, security: dict[str, Any]
) -> dict[str, Any]:
    """``pod`` (as ``objects.pod`` built it) made into a Kafka Streams pod: a new dict."""
    out = copy.deepcopy(pod)
    spec = out["spec"]
    container = spec["containers"][0]
    agent = f"{_ROOTED}{AGENT_DIR}/{AGENT_FILE}"
    env: list[dict[str, Any]] = container["env"]
    for var in env:
        if var["name"] == ENV_STATE_DIR:  # so ``state.dir=${env:SEGUE_STATE_DIR}`` works
            var["value"] = _ROOTED + var["value"]
    option = f"-javaagent:{agent}"
    theirs = next((v for v in env if v["name"] == JAVA_OPTIONS), None)
    if theirs is None:
        env.append({"name": JAVA_OPTIONS, "value": option})
    elif "valueFrom" not in theirs:
        theirs["value"] = f"{option} {theirs.get('value') or ''}".strip()
    env.insert(0, {"name": POD_ROOT, "value": ""})
    container["volumeMounts"].append(
        {"name": AGENT_VOLUME, "mountPath": AGENT_DIR, "readOnly": True}
    )
    # The agent's page fails only for a client that stopped for good (ERROR): no
    # bounded call of Segue's worker to outlast, so the worker's liveness tolerance
    # does not apply.
    for probe, failures in (("readinessProbe", 3), ("livenessProbe", 6)):
        period = container[probe]["periodSeconds"]  # the app's spec.probes
        container[probe] = http_probe(HEALTH_PATH, metrics_port, failures, period)
    spec["volumes"].append({"name": AGENT_VOLUME, "emptyDir": {}})
    spec["initContainers"] = [
        {
            "name": AGENT_VOLUME,
            "image": image,
            "command": ["cp", jar, agent],
            "env": [{"name": POD_ROOT, "value": ""}],
            "volumeMounts": [{"name": AGENT_VOLUME, "mountPath": AGENT_DIR}],
            "securityContext": copy.deepcopy(security),
            "resources": copy.deepcopy(_COPY_RESOURCES),
        }
    ]
    return out
