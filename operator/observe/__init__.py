"""The operator's OBSERVE layer: read the world, return plain data, decide nothing.

observe → decide → act (docs/architecture.md). Each module asks one source and
returns frozen dataclasses or plain dicts that the pure decision core consumes:

- ``scrape``: a worker's ``/metrics`` page → :class:`WorkerReport` (generation,
  roles, restored and checkpointed store offsets, ...), per docs/protocol.md;
- ``agent``: a Kafka Streams pod's agent page → :class:`~.agent.AgentReport`;
- ``kafka``: :class:`KafkaView`, topic partition counts and read_committed end
  offsets (the last stable offsets) through one AdminClient, its cluster metadata
  shared by every app (``metadata``), keyed by the app's credentials (``credentials``);
- ``consumer_group``: who is in a consumer group now (DescribeConsumerGroups);
- ``pods``: one pod, as the API server or a watch gives it → :class:`PodState`;
  ``pod_obs``: a pod and its scrape → what the decision core sees of it;
- ``assignment``: the published assignment, as its ConfigMap holds it;
- ``topology``: a worker's ``/topology`` document (the protocol parses it).

Failures are exceptions naming what failed (:class:`ScrapeError`,
:class:`KafkaObserveError`, the Kubernetes client's ``ApiException``); nothing
here retries, caches across calls or guesses a missing value.
"""

from segue.operator.observe.kafka import KafkaObserveError, KafkaView
from segue.operator.observe.pods import PodState, pod_state
from segue.operator.observe.scrape import (
    ScrapeError,
    WorkerReport,
    offsets,
    parse_worker_metrics,
    scrape,
)
from segue.operator.observe.topology import fetch_topology

__all__ = [
    "KafkaObserveError",
    "KafkaView",
    "PodState",
    "ScrapeError",
    "WorkerReport",
    "fetch_topology",
    "offsets",
    "parse_worker_metrics",
    "pod_state",
    "scrape",
]
