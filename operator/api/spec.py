"""The desired state of a StreamApp (``spec``), and the resource as a whole.

These pydantic models are the one definition of the API: ``crd`` turns their JSON
schema into the CRD's OpenAPI schema (``crds/streamapp.yaml``), the operator parses
every object it reads with :meth:`StreamApp.from_object`, and ``status`` holds what
the operator writes back. Python names are snake_case, the wire is camelCase. Spec
models are frozen and reject unknown fields, so a typo fails here as it fails at the
API server. Class and attribute docstrings become the CRD's descriptions
(``kubectl explain streamapp.spec``), so they are written for users.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic.alias_generators import to_camel

from segue.operator.api.status import StreamAppStatus

GROUP: Final = "segue.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = "segue.dev/v1alpha1"  # GROUP/VERSION, spelled out for the type checker
KIND: Final = "StreamApp"
PLURAL: Final = "streamapps"
SINGULAR: Final = "streamapp"
SHORT_NAME: Final = "sapp"

DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# resource.Quantity's syntax, as controller-gen writes it into CRDs.
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
STORAGE_SIZE = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"


def _quantity(value: object) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.match(QUANTITY, value):
        return value
    raise ValueError("must be an integer or a quantity string such as 500m or 1Gi")


Quantity = Annotated[
    int | str,
    PlainValidator(_quantity),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""A Kubernetes resource quantity: an integer, or a string such as ``500m`` or ``1Gi``."""

KubeObject = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""Any Kubernetes object, passed through unvalidated (the API server checks it in the pod)."""


class Model(BaseModel):
    """Spec models: camelCase on the wire, unknown fields rejected, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )


class SecretRef(Model):
    """A Secret in the StreamApp's namespace."""

    name: str = Field(pattern=DNS1123_SUBDOMAIN, max_length=253)
    """The Secret's name."""


class Kafka(Model):
    """How the workers reach Kafka."""

    bootstrap_servers: str = Field(min_length=1)
    """Comma-separated host:port list of the brokers."""
    credentials_secret: SecretRef | None = None
    """A Secret whose keys are librdkafka settings (for example `security.protocol`,
    `sasl.mechanism`, `sasl.username`, `sasl.password`), given to every worker."""


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


class SubTopology(Model):
    """One sub-topology: its tasks are `<id>_<partition>` over its source topics' partitions."""

    id: int = Field(ge=0)
    """The sub-topology's number, unique in the topology."""
    source_topics: list[str] = Field(min_length=1)
    """The topics it reads; their partition count is its task count."""
    stores: list[str] = []
    """Its state stores; each is backed by the changelog `<applicationId>-<store>-changelog`."""


class Topology(Model):
    """The application's sub-topologies, as the worker's `/topology` endpoint reports them."""

    sub_topologies: list[SubTopology] = Field(min_length=1)
    """The sub-topologies; ids must be unique."""

    @model_validator(mode="after")
    def _unique_ids(self) -> Topology:
        seen: set[int] = set()
        for sub in self.sub_topologies:
            if sub.id in seen:
                raise ValueError(f"duplicate sub-topology id {sub.id}")
            seen.add(sub.id)
        return self


class Scaling(Model):
    """How Segue moves tasks when the replica count changes."""

    acceptable_recovery_lag: int = Field(default=10000, ge=0)
    """A learner or standby this many changelog records behind (or fewer) counts as caught up
    and can take its task over."""
    max_warmup_replicas: int = Field(default=2, ge=1)
    """How many learners (extra warming copies of tasks) may exist at once."""
    num_standby_replicas: int = Field(default=0, ge=0)
    """Standby copies kept of each stateful task, on other pods, for fast failover."""
    scale_down_timeout_seconds: int = Field(default=600, ge=0)
    """How long a scale-down waits for the leaving pods' tasks to warm up elsewhere before it
    deletes the pods anyway."""
    registration_timeout_seconds: int = Field(default=300, ge=0)
    """How long a new pod may take to start reporting before Segue stops waiting for it."""
    expansion_timeout_seconds: int = Field(default=30, ge=0)
    """How long to wait after source topics grow before spreading the new partitions."""
    balance_tolerance: float = Field(default=0.0, ge=0, le=10)
    """How many tasks a pod may run above the balanced share before tasks are moved."""
    learner_promotion: Literal["eager", "batch"] = "eager"
    """`eager`: hand each task over as soon as its learner is ready; `batch`: hand a pod's
    tasks over together once all of its learners are ready."""


class VolumeClaim(Model):
    """A PersistentVolumeClaim per pod for the state directory."""

    size: str = Field(default="1Gi", pattern=STORAGE_SIZE)
    """The requested storage, such as 1Gi or 500Mi."""
    storage_class_name: str | None = None
    """The storage class; the cluster's default when absent."""
    access_modes: list[Literal["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]] = [
        "ReadWriteOnce"
    ]
    """The claim's access modes."""


class State(Model):
    """Where the workers keep local state."""

    retention: Literal["Delete", "Retain"] = "Delete"
    """What happens to a leaving pod's claim on scale-down: deleted, or kept for a later
    scale-up to reuse."""
    volume_claim: VolumeClaim | None = None
    """A claim per pod; when absent the state lives in an emptyDir."""


class StreamAppSpec(Model):
    """The desired state of a stream application."""

    replicas: int = Field(default=1, ge=0)
    """How many worker pods to run."""
    application_id: str = Field(pattern=r"^[a-zA-Z0-9._-]+$", max_length=200)
    """The Kafka application id: the consumer group id under which offsets are committed
    and the prefix of the internal topics."""
    kafka: Kafka
    template: PodTemplate
    """The worker pods."""
    metrics_port: int = Field(default=9400, ge=1, le=65535)
    """The worker's HTTP port (/metrics, /healthz, /readyz, /topology)."""
    state_dir: str = Field(default="/var/lib/segue/state", pattern=r"^/")
    """The absolute path of the local state directory in the worker container."""
    topology: Topology | None = None
    """The sub-topologies; when absent the operator reads them from a running worker's
    `/topology` endpoint."""
    scaling: Scaling = Scaling()
    """How scaling moves tasks; every field has a default."""
    state: State = State()
    """Where local state lives; an emptyDir per pod by default."""


class InvalidStreamApp(ValueError):
    """A StreamApp object that does not match the schema; ``errors`` are (field path, message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("invalid StreamApp: " + "; ".join(f"{p}: {m}" for p, m in errors))


def field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's error location as the API server writes it: ``spec.template.env[0].name``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path


class StreamApp(BaseModel):
    """A StreamApp object: what the operator reads from, and writes back to, the API server."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, extra="forbid"
    )

    api_version: Literal["segue.dev/v1alpha1"] = API_VERSION
    kind: Literal["StreamApp"] = KIND
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: StreamAppSpec
    status: StreamAppStatus | None = None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> StreamApp:
        """Parse a Kubernetes object; raise :class:`InvalidStreamApp` naming each bad field."""
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            raise InvalidStreamApp(
                [(field_path(e["loc"]) or "(object)", e["msg"]) for e in exc.errors()]
            ) from None

    def to_object(self) -> dict[str, Any]:
        """The object as JSON-ready camelCase data, unset optional fields left out."""
        return self.model_dump(mode="json", exclude_none=True)
