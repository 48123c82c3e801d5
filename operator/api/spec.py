"""The desired state of a StreamApp (``spec``): Kafka, the topology, scaling and state.

:class:`StreamAppSpec` is what users write; ``resource`` wraps it with ``metadata``
and ``status`` into the object the operator reads, and ``crd`` turns its JSON schema
into the CRD's OpenAPI schema (``crds/streamapp.yaml``). The worker pods themselves
are described in ``template``; the shared base model, names and patterns live in
``base``. Models are frozen and reject unknown fields, so a typo fails here as it
fails at the API server. Class and attribute docstrings become the CRD's descriptions
(``kubectl explain streamapp.spec``), so they are written for users.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from segue.operator.api.base import DNS1123_SUBDOMAIN, STORAGE_SIZE, Model
from segue.operator.api.template import PodTemplate
from segue.operator.autoscale import CATCH_UP_SECONDS, WINDOW_SECONDS
from segue.protocol.names import DEFAULT_METRICS_PORT, DEFAULT_STATE_DIR
from segue.protocol.probes import PERIOD_SECONDS

# pydantic copies mutable defaults per instance; ruff knows that only of models whose
# pydantic base is in the same file, and Model's is in base.
# ruff: noqa: RUF012


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
    operator_credentials_secret: SecretRef | None = None
    """A Secret of the same form for the operator's own clients (it reads the app's
    topics and offsets, and writes its history topic), so that it can log in as a
    principal of its own with read-only ACLs. Unset: the operator uses
    `credentialsSecret`."""


class SubTopologySpec(Model):
    """One sub-topology: its tasks are `<id>_<partition>` over its source topics' partitions."""

    id: int = Field(ge=0)
    """The sub-topology's number, unique in the topology."""
    source_topics: list[str] = Field(min_length=1)
    """The topics it reads; their partition count is its task count."""
    stores: list[str] = []
    """Its state stores; each is backed by the changelog `<applicationId>-<store>-changelog`."""


class TopologySpec(Model):
    """The application's sub-topologies, as the worker's `/topology` endpoint reports them."""

    sub_topologies: list[SubTopologySpec] = Field(min_length=1)
    """The sub-topologies; ids must be unique."""

    @model_validator(mode="after")
    def _unique_ids(self) -> TopologySpec:
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


class Autoscaling(Model):
    """What the autoscaling signal assumes of this app (docs/autoscaling.md)."""

    catch_up_seconds: int = Field(default=CATCH_UP_SECONDS, ge=1, le=86400)
    """How soon a backlog should be drained: the signal (`segue-replicas-needed`) asks
    for enough pods to clear it within this while input keeps arriving."""
    window_seconds: int = Field(default=WINDOW_SECONDS, ge=5, le=600)
    """How many seconds of input samples a rate is taken over. Shorter follows a step
    of input sooner and is noisier; the default is one HPA sync period. After Kafka was
    unavailable, no value is served until a whole window was sampled again."""


class Probes(Model):
    """How the kubelet asks the pods' `/readyz` and `/healthz` (Segue writes both
    probes)."""

    period_seconds: int = Field(default=PERIOD_SECONDS, ge=1, le=10)
    """Seconds between two probes. A pod is ready at most this long after it can serve;
    its liveness probe restarts it only after the same 40 s of failures whatever the
    period."""


class Rollout(Model):
    """How a change of `template` reaches running pods."""

    max_unavailable: int = Field(default=1, ge=1)
    """How many pods restart at once. Before a pod restarts, its active tasks are handed
    to caught-up copies on other pods, so the app pauses only for handovers."""


class StreamAppSpec(Model):
    """The desired state of a stream application."""

    replicas: int = Field(default=1, ge=0)
    """How many worker pods to run."""
    application_id: str = Field(pattern=r"^[a-zA-Z0-9._-]+$", max_length=200)
    """The Kafka application id: the consumer group id under which offsets are committed
    and the prefix of the internal topics."""
    kafka: Kafka
    runtime: Literal["segue", "kafka-streams"] = "segue"
    """What the pods run: `segue`, Segue's worker (the template runs `segue worker`), or
    `kafka-streams`, an unmodified Kafka Streams app (3.8 or newer) with Segue's task
    assignor plugged in (`task.assignor.class=dev.segue.kstreams.SegueTaskAssignor`; and,
    optionally, `default.client.supplier=dev.segue.kstreams.SegueClientSupplier`, so that
    the group rebalances when the operator asks); its group leader reports the topology,
    so `topology` is not needed. The template runs
    the app's own image and command; the operator injects the plugin as a Java agent and
    reads each pod's progress from it (docs/kafka-streams.md)."""
    template: PodTemplate
    """The worker pods."""
    metrics_port: int = Field(default=DEFAULT_METRICS_PORT, ge=1, le=65535)
    """The worker's HTTP port (/metrics, /healthz, /readyz, /topology)."""
    state_dir: str = Field(default=DEFAULT_STATE_DIR, pattern=r"^/")
    """The absolute path of the local state directory in the worker container."""
    topology: TopologySpec | None = None
    """The sub-topologies; when absent the operator reads them from a running worker's
    `/topology` endpoint."""
    scaling: Scaling = Scaling()
    """How scaling moves tasks; every field has a default."""
    state: State = State()
    """Where local state lives; an emptyDir per pod by default."""
    autoscaling: Autoscaling = Autoscaling()
    """What the autoscaling signal assumes; every field has a default."""
    rollout: Rollout = Rollout()
    """How template changes roll through the pods; one at a time by default."""
    probes: Probes = Probes()
    """How often the pods are probed; every field has a default."""
