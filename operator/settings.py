"""Every knob of the operator process, in one object (Kopf's own settings are set from it).

Per-application behaviour lives in each StreamApp's ``spec.scaling``; these are about the
operator itself: how often it looks while something is in flight or idle, how long it
waits for a worker's metrics or Kafka, where it serves its metrics, health and external
metrics API, and how replicas elect the one that acts. ``segue operator`` (:mod:`.cli`)
fills it from flags; the Helm chart renders one flag per field (a test keeps the two in
step).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from segue.operator.image import KSTREAMS_AGENT_JAR

# A namespace's name (a DNS-1123 label): watched namespaces are named exactly, never a
# pattern, so the operator needs no right to list namespaces (handlers says why).
Namespace = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]


class LeaderElection(BaseModel):
    """A ``coordination.k8s.io`` Lease decides which replica acts (:mod:`.election`).

    The timings are client-go's: the leader renews every ``retry_period`` and gives up
    (exits) when it could not renew for ``renew_deadline``; a standby takes the lease once
    it has seen no renewal for ``lease_duration``. ``renew_deadline < lease_duration`` is
    what makes the old leader stop before anyone else can start.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = False
    lease_name: str = Field(default="segue-operator", min_length=1)
    lease_namespace: str = Field(default="default", min_length=1)
    identity: str = Field(default="segue-operator", min_length=1)
    lease_duration: int = Field(default=15, ge=1)  # whole seconds: the Lease API's unit
    renew_deadline: float = Field(default=10.0, gt=0)
    retry_period: float = Field(default=2.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> LeaderElection:
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "leader election needs retry-period < renew-deadline < lease-duration, got "
                f"{self.retry_period} / {self.renew_deadline} / {self.lease_duration}"
            )
        return self


class ExternalMetrics(BaseModel):
    """The ``external.metrics.k8s.io`` provider an HPA reads (:mod:`.metricsapi`):
    off unless ``port`` is set, and then it needs its serving certificate and key
    (the one the APIService's ``caBundle`` vouches for)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int = Field(default=0, ge=0, le=65535)  # 0: off
    cert_file: str | None = None
    key_file: str | None = None

    @model_validator(mode="after")
    def _certified(self) -> ExternalMetrics:
        if self.port and not (self.cert_file and self.key_file):
            raise ValueError(
                "the external metrics API (--external-metrics-port) needs "
                "--tls-cert-file and --tls-private-key-file"
            )
        return self


class KafkaStreamsAgent(BaseModel):
    """What a ``runtime: kafka-streams`` pod's init container copies the agent from
    (docs/kafka-streams.md, "Adoption"): an image holding the jar, normally the
    operator's own (the chart passes it), and the jar's path in that image. No image:
    such apps are refused (Degraded ``AgentNotConfigured``), never run without it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str = ""
    jar: str = Field(default=KSTREAMS_AGENT_JAR, min_length=1)


class OperatorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    namespaces: tuple[Namespace, ...] = ()  # empty: every namespace (cluster-wide)
    busy_interval: float = Field(default=0.5, gt=0)  # seconds between looks while scaling
    idle_interval: float = Field(default=5.0, gt=0)  # ... and while settled (events wake it)
    error_backoff: float = Field(default=2.0, gt=0)
    scrape_timeout: float = Field(default=2.0, gt=0)
    kafka_timeout: float = Field(default=10.0, gt=0)
    scrape_workers: int = Field(default=16, ge=1)
    step_workers: int = Field(default=16, ge=2)  # reconcile steps at once (:mod:`.steps`)
    routine_looks: float = Field(default=20.0, gt=0)  # settled apps' looks a second, in all
    bind_address: str = "0.0.0.0"  # where the metrics and health servers listen
    metrics_port: int = Field(default=9401, ge=0, le=65535)  # 0: do not serve metrics
    health_port: int = Field(default=0, ge=0, le=65535)  # /healthz and /readyz; 0: off
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["plain", "json"] = "plain"
    leader_election: LeaderElection = LeaderElection()
    external_metrics: ExternalMetrics = ExternalMetrics()
    kstreams_agent: KafkaStreamsAgent = KafkaStreamsAgent()
    # The Kafka topic each app's history records go to, on the app's own cluster with
    # its own credentials (docs/operator.md, "History"); "": not recorded.
    history_topic: str = Field(default="", pattern=r"^([a-zA-Z0-9._-]{1,249})?$")
