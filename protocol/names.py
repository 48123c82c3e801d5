"""Every name the operator and a worker must agree on, spelled once.

Topics: a store's changelog is ``<applicationId>-<store>-changelog`` and a repartition
topic ``<applicationId>-<name>-repartition`` (Kafka Streams' names); each active task
writes under the transactional id ``<applicationId>-<task>`` (docs/protocol.md, Safety).
Objects: one assignment ConfigMap per StreamApp, ``<app>-assignment``, and the labels on
everything the operator creates. Pods: the environment the operator sets and the worker
reads, the worker's port and its HTTP paths.
"""

from __future__ import annotations

from typing import Final

# -- topics --

CHANGELOG_SUFFIX: Final = "-changelog"
REPARTITION_SUFFIX: Final = "-repartition"


def changelog_topic(application_id: str, store: str) -> str:
    return f"{application_id}-{store}{CHANGELOG_SUFFIX}"


def repartition_topic(application_id: str, name: str) -> str:
    return f"{application_id}-{name}{REPARTITION_SUFFIX}"


def is_repartition_topic(topic: str, application_id: str) -> bool:
    prefix = f"{application_id}-"
    return (
        len(topic) > len(prefix) + len(REPARTITION_SUFFIX)
        and topic.startswith(prefix)
        and topic.endswith(REPARTITION_SUFFIX)
    )


def transactional_id(application_id: str, task: str) -> str:
    """Stable per task, so a new owner's ``init_transactions`` fences the old one."""
    return f"{application_id}-{task}"


# -- objects --


def assignment_configmap(app: str) -> str:
    """The assignment ConfigMap of StreamApp ``app``."""
    return f"{app}-assignment"


def group_configmap(app: str) -> str:
    """Where the Kafka Streams plugin of StreamApp ``app`` reports its group (:mod:`.kstreams`)."""
    return f"{app}-group"


MANAGED_BY: Final = "app.kubernetes.io/managed-by"
MANAGER: Final = "segue"  # the value of MANAGED_BY on everything the operator creates
NAME_LABEL: Final = "app.kubernetes.io/name"
APP_LABEL: Final = "segue.dev/app"  # the StreamApp's name
MEMBER_LABEL: Final = "segue.dev/member"  # the member id (the pod's name)

# -- the pod's environment, set by the operator, read by the worker --

ENV_POD_NAME: Final = "POD_NAME"  # downward API: the member id
ENV_POD_NAMESPACE: Final = "POD_NAMESPACE"  # downward API: where the assignment lives
ENV_POD_IP: Final = "POD_IP"  # downward API: where the worker serves
ENV_STREAMAPP: Final = "SEGUE_STREAMAPP"  # names the assignment ConfigMap
ENV_APPLICATION_ID: Final = "SEGUE_APPLICATION_ID"
ENV_BOOTSTRAP_SERVERS: Final = "SEGUE_BOOTSTRAP_SERVERS"
ENV_METRICS_PORT: Final = "SEGUE_METRICS_PORT"
ENV_STATE_DIR: Final = "SEGUE_STATE_DIR"
ENV_TMPDIR: Final = "TMPDIR"  # temp files: an emptyDir, since the root filesystem is read-only
KAFKA_ENV_PREFIX: Final = "SEGUE_KAFKA_"  # SEGUE_KAFKA_SASL_USERNAME -> sasl.username


def kafka_env_name(setting: str) -> str:
    """``sasl.username`` -> ``SEGUE_KAFKA_SASL_USERNAME``; :func:`kafka_setting` maps back."""
    return KAFKA_ENV_PREFIX + setting.replace(".", "_").replace("-", "_").upper()


def kafka_setting(env_name: str) -> str | None:
    """``SEGUE_KAFKA_SASL_USERNAME`` -> ``sasl.username``; None for any other variable."""
    if not env_name.startswith(KAFKA_ENV_PREFIX):
        return None
    return env_name[len(KAFKA_ENV_PREFIX) :].lower().replace("_", ".")


# -- the worker's port --

DEFAULT_METRICS_PORT: Final = 9400
DEFAULT_STATE_DIR: Final = "/var/lib/segue/state"
METRICS_PATH: Final = "/metrics"
HEALTH_PATH: Final = "/healthz"  # the main loop is alive
READY_PATH: Final = "/readyz"  # a first assignment applied, every active task running
TOPOLOGY_PATH: Final = "/topology"  # the :mod:`.topology` document
