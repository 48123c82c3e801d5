"""What one Kafka Streams pod's agent says: its ``/metrics`` page as plain data.

The agent's side is ``kstreams/.../Endpoint.java`` (docs/kafka-streams.md, "What each pod
reports"); the names are the protocol's (:mod:`segue.protocol.reports`). A Kafka Streams
app serves none of the worker's metrics (``scrape``), so its pods are read here instead,
through the same :func:`~.scrape.http_get` and with the same :class:`~.scrape.ScrapeError`
for every way it can fail. What the numbers mean for a task is the operator's glue
(:mod:`segue.operator.kstreams`), with the group report's topology.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from segue.operator.observe.scrape import ScrapeError, http_get, samples, whole
from segue.protocol import reports as r
from segue.protocol.names import METRICS_PATH

_FALLBACKS = f"{r.KSTREAMS_FALLBACKS}_total"


@dataclass(frozen=True)
class AgentReport:
    consumers: tuple[str, ...] = ()  # the instance's main consumers' client ids
    restore_lag: dict[tuple[str, int], int] = field(default_factory=dict)  # changelog -> behind
    fallbacks: int = 0  # rebalances this instance's plugin handed to Kafka Streams' assignor


def parse_agent_metrics(text: str) -> AgentReport:
    """Parse an agent's page; other metrics are ignored, a known one that lacks a label
    or whose value is not a whole number raises ValueError."""
    consumers: list[str] = []
    lags: dict[tuple[str, int], int] = {}
    fallbacks = 0
    for sample in samples(text):
        if sample.name == r.KSTREAMS_CONSUMER_CLIENT:
            client = sample.labels.get("client_id")
            if not client:
                raise ValueError(f"{sample.name}{sample.labels}: no client_id")
            if whole(sample) == 1:
                consumers.append(client)
        elif sample.name == r.KSTREAMS_RESTORE_LAG:
            topic, partition = sample.labels.get("topic"), sample.labels.get("partition", "")
            if not topic or not partition.isdigit():
                raise ValueError(f"{sample.name}{sample.labels}: no topic or partition")
            lags[(topic, int(partition))] = whole(sample)
        elif sample.name in (_FALLBACKS, r.KSTREAMS_FALLBACKS):
            fallbacks = whole(sample)
    return AgentReport(tuple(sorted(consumers)), lags, fallbacks)


def scrape_agent(host: str, port: int, timeout: float = 2.0) -> AgentReport:
    """Read and parse one agent's ``/metrics``; :class:`ScrapeError` on any failure."""
    body = http_get(host, port, METRICS_PATH, timeout)
    try:
        return parse_agent_metrics(body.decode("utf-8"))
    except ValueError as exc:
        raise ScrapeError(f"{host}:{port}: GET /metrics: unreadable page: {exc}") from exc
