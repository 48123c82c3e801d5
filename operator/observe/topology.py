"""Read a running worker's ``/topology`` document (``segue.protocol.topology``).

The one HTTP GET, failing with ``metrics.ScrapeError``; the document is validated by
the protocol's :func:`~segue.protocol.topology.parse_topology`, which also reads a
StreamApp spec's ``subTopologies`` before any pod runs.
"""

from __future__ import annotations

import json
from typing import Any

from segue.operator.observe.scrape import ScrapeError, http_get
from segue.protocol.names import TOPOLOGY_PATH


def fetch_topology(host: str, port: int, timeout: float = 2.0) -> dict[str, Any]:
    """A worker's ``/topology`` document, unparsed; ScrapeError on any failure."""
    body = http_get(host, port, TOPOLOGY_PATH, timeout)
    try:
        doc = json.loads(body)
    except ValueError as exc:
        raise ScrapeError(f"{host}:{port}: GET {TOPOLOGY_PATH}: not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise ScrapeError(f"{host}:{port}: GET {TOPOLOGY_PATH}: not a JSON object")
    return doc
