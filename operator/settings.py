"""Every knob of the operator process, in one object (Kopf's own settings are set from it).

Per-application behaviour lives in each StreamApp's ``spec.scaling``; these are about the
operator itself: how often it looks while something is in flight or idle, how long it
waits for a worker's metrics or Kafka, where it serves its own metrics. ``segue
operator`` fills it from flags and ``SEGUE_OPERATOR_*`` environment variables.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class OperatorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    namespaces: tuple[str, ...] = ()  # empty: every namespace (cluster-wide)
    busy_interval: float = Field(default=0.5, gt=0)  # seconds between looks while scaling
    idle_interval: float = Field(default=5.0, gt=0)  # ... and while settled (events wake it)
    error_backoff: float = Field(default=2.0, gt=0)
    scrape_timeout: float = Field(default=2.0, gt=0)
    kafka_timeout: float = Field(default=10.0, gt=0)
    scrape_workers: int = Field(default=16, ge=1)
    metrics_port: int = Field(default=9401, ge=0, le=65535)  # 0: do not serve metrics
    metrics_host: str = "0.0.0.0"
    health_port: int = Field(default=0, ge=0, le=65535)  # Kopf's liveness endpoint; 0: off
    log_format: str = Field(default="plain", pattern="^(plain|json)$")
