"""The worker's settings: flags first, then environment, then defaults.

The operator sets the environment in the pod template (docs/worker.md lists
every variable): the downward API gives ``POD_NAME`` (the member id),
``POD_NAMESPACE`` and ``POD_IP`` (where ``/metrics`` binds). Validated with
pydantic because this is a boundary; ``cli`` builds it, ``runtime`` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from segue.protocol import names
from segue.worker import watchdog

Guarantee = Literal["exactly_once", "at_least_once"]


class KafkaSettings(dict[str, str]):
    """librdkafka settings, some of them credentials (``sasl.password``, from the
    pod's Secret): a plain dict to every client, but its repr names the keys only.

    So a config printed in a log line, in a validation error (pydantic shows the whole
    input when a field is missing) or in a traceback never carries a value."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{key!r}: '***'" for key in sorted(self)) + "}"

    __str__ = __repr__


class WorkerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    app: str = Field(description="MODULE:OBJECT, a Topology or a function returning one")
    application_id: str | None = None  # default: the Topology's
    member: str = Field(min_length=1)
    namespace: str = Field(min_length=1)
    assignment_configmap: str = Field(min_length=1)
    bootstrap_servers: str = Field(min_length=1)
    state_dir: Path
    metrics_host: str = "0.0.0.0"
    metrics_port: int = Field(default=names.DEFAULT_METRICS_PORT, ge=0, le=65535)
    kubeconfig: Path | None = None  # None: in-cluster (the pod's ServiceAccount)
    processing_guarantee: Guarantee = "exactly_once"
    commit_interval_ms: int = Field(default=100, ge=1)
    fence_delay_ms: int = Field(default=50, ge=0)
    shutdown_timeout: float = Field(default=20.0, gt=0)
    restore_batch: int = Field(default=10_000, ge=1)
    # records/s a worker restores for standbys and learners (None: no limit); actives never wait
    standby_restore_rate: float | None = Field(default=None, gt=0)
    # The longest any blocking Kafka call may hold the worker before it reports itself
    # unhealthy (None: each call's own timeout plus watchdog.GRACE); then, stuck this
    # many seconds more, it exits so the pod restarts (docs/worker.md, "Stuck calls").
    kafka_call_bound: float | None = Field(default=None, gt=0)
    stuck_exit_after: float = Field(default=watchdog.EXIT_AFTER, ge=0)
    # extra librdkafka settings for all clients, credentials among them: never shown
    kafka: Annotated[dict[str, str], AfterValidator(KafkaSettings)] = Field(
        default_factory=KafkaSettings
    )

    @field_validator("app")
    @classmethod
    def _app(cls, app: str) -> str:
        # A field's check, so its error shows this field's input, not the whole config.
        if ":" not in app:
            raise ValueError(f"--app must be MODULE:OBJECT, got {app!r}")
        return app


# The operator sets the protocol's variables in the pod template; the rest are the
# worker's own, for a pod template or a run by hand.
ENV = {
    "application_id": names.ENV_APPLICATION_ID,
    "member": names.ENV_POD_NAME,
    "namespace": names.ENV_POD_NAMESPACE,
    "assignment_configmap": "SEGUE_ASSIGNMENT_CONFIGMAP",
    "bootstrap_servers": names.ENV_BOOTSTRAP_SERVERS,
    "state_dir": names.ENV_STATE_DIR,
    "metrics_host": names.ENV_POD_IP,
    "metrics_port": names.ENV_METRICS_PORT,
    "kubeconfig": "SEGUE_KUBECONFIG",
    "processing_guarantee": "SEGUE_PROCESSING_GUARANTEE",
    "commit_interval_ms": "SEGUE_COMMIT_INTERVAL_MS",
    "fence_delay_ms": "SEGUE_FENCE_DELAY_MS",
    "standby_restore_rate": "SEGUE_STANDBY_RESTORE_RATE",
    "shutdown_timeout": "SEGUE_SHUTDOWN_TIMEOUT",
    "kafka_call_bound": "SEGUE_KAFKA_CALL_BOUND",
    "stuck_exit_after": "SEGUE_STUCK_EXIT_AFTER",
}


def from_sources(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> WorkerConfig:
    """Merge flags (None = not given) over the environment over defaults.

    ``SEGUE_STREAMAPP`` (the StreamApp's name) gives the default ConfigMap name,
    ``<streamapp>-assignment``. ``SEGUE_KAFKA_<KEY>`` variables (``_`` for ``.``,
    lower-cased) add librdkafka settings, e.g. ``SEGUE_KAFKA_SECURITY_PROTOCOL``.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for field_name, variable in ENV.items():
        if env.get(variable):
            values[field_name] = env[variable]
    if "assignment_configmap" not in values and env.get(names.ENV_STREAMAPP):
        values["assignment_configmap"] = names.assignment_configmap(env[names.ENV_STREAMAPP])
    values.setdefault("state_dir", names.DEFAULT_STATE_DIR)
    own = set(ENV.values())  # SEGUE_KAFKA_CALL_BOUND is the worker's, not librdkafka's
    kafka = {
        setting: value
        for key, value in env.items()
        if key not in own and (setting := names.kafka_setting(key)) is not None
    }
    for name, value in flags.items():
        if value is None:
            continue
        if name == "kafka":
            kafka.update(value)
        else:
            values[name] = value
    values["kafka"] = KafkaSettings(kafka)  # masked in the errors of a bad config too
    return WorkerConfig.model_validate(values)


def explain(error: ValidationError) -> list[str]:
    """One line per bad or missing setting, naming its flag and variable (not pydantic's
    dump, which repeats every input; credentials are masked by KafkaSettings anyway)."""
    lines = []
    for problem in error.errors(include_url=False):
        field = str(problem["loc"][0]) if problem["loc"] else ""
        where = f"--{field.replace('_', '-')}" if field else "(the configuration)"
        if field in ENV:
            where += f" (env {ENV[field]})"
        said = "missing" if problem["type"] == "missing" else problem["msg"]
        lines.append(f"  {where}: {said}")
    return lines
