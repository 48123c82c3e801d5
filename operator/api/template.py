"""The worker pods of a StreamApp (``spec.template``): their container and metadata.

Deliberately a small part of a Pod: what a user needs to run ``segue worker`` (image,
command, env, resources, ports, security contexts, labels). ``segue.operator.act.objects``
builds each pod from it and adds what Segue owns: the worker's environment, the metrics
port, the state and temp volumes and Segue's labels, which win on a clash. The two
security contexts are the exception: Segue's hardened defaults (non-root, read-only root
filesystem) apply only while the template leaves them out, so a cluster that needs
other ones can say so. The models build on ``base``
(frozen, camelCase, unknown fields rejected); ``spec`` puts :class:`PodTemplate` into
the StreamApp's spec. Docstrings become the CRD's descriptions, written for users.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from segue.operator.api.base import KubeObject, Model, Quantity


class EnvVar(Model):
    """An environment variable of the worker container (as in a Pod)."""

    name: str = Field(pattern=r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
    """The variable's name."""
    value: str | None = None
    """Its value (empty when neither value nor valueFrom is set)."""
    value_from: KubeObject | None = None
    """A Pod `valueFrom` source (secretKeyRef, configMapKeyRef, fieldRef, ...)."""

    @model_validator(mode="after")
    def _one_source(self) -> EnvVar:
        if self.value is not None and self.value_from is not None:
            raise ValueError(f"env {self.name}: set value or valueFrom, not both")
        return self


class Resources(Model):
    """Compute resources of the worker container."""

    requests: dict[str, Quantity] = Field(default_factory=dict)
    """What the scheduler reserves, by resource name (cpu, memory, ...)."""
    limits: dict[str, Quantity] = Field(default_factory=dict)
    """The most the container may use, by resource name."""


class ContainerPort(Model):
    """An extra port of the worker container (the metrics port is added by Segue)."""

    name: str | None = Field(
        default=None, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=15
    )
    """A name for the port (an IANA service name: lowercase, at most 15 characters)."""
    container_port: int = Field(ge=1, le=65535)
    """The port number in the container."""
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    """The port's protocol."""


class PodTemplate(Model):
    """The worker pods: the container that runs `segue worker` and the pods' metadata."""

    image: str = Field(min_length=1)
    """The worker image."""
    command: list[str] | None = None
    """The container's entrypoint; the image's when absent."""
    args: list[str] | None = None
    """Arguments to the entrypoint; the image's when absent."""
    env: list[EnvVar] = Field(default_factory=list)
    """Environment variables of the worker container, on top of the ones Segue sets."""
    resources: Resources = Field(default_factory=Resources)
    ports: list[ContainerPort] = Field(default_factory=list)
    """Extra container ports."""
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    """When the image is pulled; Kubernetes' default when absent."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels of the pods (Segue's own labels win on a clash)."""
    annotations: dict[str, str] = Field(default_factory=dict)
    """Extra annotations of the pods."""
    security_context: KubeObject | None = None
    """The worker container's securityContext, replacing Segue's default (non-root, no
    privilege escalation, read-only root filesystem, all capabilities dropped)."""
    pod_security_context: KubeObject | None = None
    """The pods' securityContext, replacing Segue's default (runAsNonRoot, user, group and
    fsGroup 10001, the RuntimeDefault seccomp profile)."""
