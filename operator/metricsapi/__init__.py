"""The operator's ``external.metrics.k8s.io`` provider: what an HPA reads to scale a
StreamApp through its ``/scale`` subresource.

An aggregated API server, as KEDA's metrics server is: the chart registers an
APIService ``v1beta1.external.metrics.k8s.io`` pointing at the operator's Service, and
the API server proxies ``/apis/external.metrics.k8s.io/...`` here. Values come from the
:class:`~segue.operator.autoscale.SignalBoard` the reconcile loops fill, so the HPA,
the Prometheus gauges and the status can never disagree. :mod:`.values` is what is
answered (pure), :mod:`.trust` who is believed, :mod:`.server` the HTTPS server.
"""

from segue.operator.metricsapi.server import BoardSource, MetricsServer, serve
from segue.operator.metricsapi.trust import Credentials
from segue.operator.metricsapi.values import METRICS, NEVER

__all__ = ["METRICS", "NEVER", "BoardSource", "Credentials", "MetricsServer", "serve"]
