"""``segue operator``: run the operator (the container image's entry point).

One flag per field of :class:`~.settings.OperatorSettings` (the Helm chart renders each
of them; ``tests/chart`` checks none is missing). ``--kubeconfig``, ``KUBECONFIG`` or
``~/.kube/config`` points at a cluster from outside, the pod's ServiceAccount inside. The
process serves its metrics, probes and external metrics API at once; with
``--leader-elect`` it then waits for the Lease (:mod:`.election`) before Kopf starts, so
a standby replica watches nothing and writes nothing, and it exits if it ever loses the
lease.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from segue.operator.image import KSTREAMS_AGENT_JAR, KSTREAMS_AGENT_JAR_ENV

if TYPE_CHECKING:
    from segue.operator.replica import Replica

HELP = "run the operator that scales StreamApps"
LEVELS = ("debug", "info", "warning", "error")


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--kubeconfig",
        help="kubeconfig file (default: KUBECONFIG, else in-cluster in a pod, else ~/.kube/config)",
    )
    add(
        "--namespace",
        "-n",
        action="append",
        default=[],
        help="watch only this namespace (repeatable; default: all namespaces)",
    )
    add("--bind-address", default="0.0.0.0", help="address of the metrics and health servers")
    add("--metrics-port", type=int, default=9401, help="port of /metrics (0: off; default 9401)")
    add(
        "--health-port",
        type=int,
        default=0,
        help="port of the /healthz and /readyz probes (0: off, the default)",
    )
    external = parser.add_argument_group(
        "external metrics API (external.metrics.k8s.io, what an HPA reads)"
    )
    external.add_argument(
        "--external-metrics-port",
        type=int,
        default=0,
        help="HTTPS port of the external metrics API (0: off, the default)",
    )
    external.add_argument("--tls-cert-file", help="its serving certificate (PEM)")
    external.add_argument("--tls-private-key-file", help="that certificate's private key (PEM)")
    timing = parser.add_argument_group("timing")
    timing.add_argument(
        "--busy-interval", type=float, default=0.5, help="seconds between looks while scaling"
    )
    timing.add_argument(
        "--idle-interval",
        type=float,
        default=5.0,
        help="seconds between looks while settled; changes wake it at once (default 5)",
    )
    timing.add_argument(
        "--error-backoff", type=float, default=2.0, help="seconds before retrying a failed step"
    )
    timing.add_argument(
        "--scrape-timeout", type=float, default=2.0, help="seconds to wait for a worker's metrics"
    )
    timing.add_argument(
        "--kafka-timeout", type=float, default=10.0, help="seconds to wait for Kafka's admin API"
    )
    timing.add_argument(
        "--scrape-workers", type=int, default=16, help="worker pods scraped in parallel"
    )
    timing.add_argument(
        "--step-workers",
        type=int,
        default=16,
        help="reconcile steps run at once, over all apps; settled apps' routine looks take at "
        "most half, so a scale is looked at first (default 16)",
    )
    timing.add_argument(
        "--routine-looks",
        type=float,
        default=20.0,
        help="settled apps' looks per second, over all apps: past idle-interval x this many "
        "apps, each settled app is looked at less often (default 20)",
    )
    history = parser.add_argument_group('history (docs/operator.md, "History")')
    history.add_argument(
        "--history-topic",
        default="",
        help="record each step that changed something to this Kafka topic of each app's "
        "own cluster (default: off)",
    )
    agent = parser.add_argument_group("Kafka Streams apps (docs/kafka-streams.md)")
    agent.add_argument(
        "--kstreams-agent-image",
        default="",
        help="the image the agent jar is copied from into runtime: kafka-streams pods, "
        "normally this operator's own (default: none, such apps are refused)",
    )
    agent.add_argument(
        "--kstreams-agent-jar",
        default=os.environ.get(KSTREAMS_AGENT_JAR_ENV) or KSTREAMS_AGENT_JAR,
        help=f"its path in that image (default ${KSTREAMS_AGENT_JAR_ENV} or {KSTREAMS_AGENT_JAR})",
    )
    logs = parser.add_argument_group("logging")
    logs.add_argument("--log-level", choices=LEVELS, default="info")
    logs.add_argument("--log-format", choices=["plain", "json"], default="plain")
    logs.add_argument("--verbose", action="store_true", help="the same as --log-level debug")
    lease = parser.add_argument_group("leader election (a coordination.k8s.io Lease)")
    lease.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="act only while holding the lease (run two replicas or more)",
    )
    lease.add_argument("--lease-name", default="segue-operator")
    lease.add_argument("--lease-namespace", help="default: the pod's namespace, else 'default'")
    lease.add_argument("--identity", help="this replica's name in the lease (default: unique)")
    lease.add_argument(
        "--lease-duration", type=int, default=15, help="seconds a standby waits out a silent leader"
    )
    lease.add_argument(
        "--renew-deadline",
        type=float,
        default=10.0,
        help="seconds the leader may fail to renew before it stops acting",
    )
    lease.add_argument("--retry-period", type=float, default=2.0, help="seconds between tries")


def settings_from(args: argparse.Namespace) -> Any:
    """The settings the flags describe (``pydantic.ValidationError`` names a bad one)."""
    import socket
    import uuid

    from segue.operator.settings import (
        ExternalMetrics,
        KafkaStreamsAgent,
        LeaderElection,
        OperatorSettings,
    )
    from segue.podenv import pod_namespace

    return OperatorSettings(
        namespaces=tuple(args.namespace),
        busy_interval=args.busy_interval,
        idle_interval=args.idle_interval,
        error_backoff=args.error_backoff,
        scrape_timeout=args.scrape_timeout,
        kafka_timeout=args.kafka_timeout,
        scrape_workers=args.scrape_workers,
        step_workers=args.step_workers,
        routine_looks=args.routine_looks,
        bind_address=args.bind_address,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
        log_level="debug" if args.verbose else args.log_level,
        log_format=args.log_format,
        history_topic=args.history_topic,
        kstreams_agent=KafkaStreamsAgent(
            image=args.kstreams_agent_image, jar=args.kstreams_agent_jar
        ),
        leader_election=LeaderElection(
            enabled=args.leader_elect,
            lease_name=args.lease_name,
            lease_namespace=args.lease_namespace or pod_namespace() or "default",
            identity=args.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}",
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
        ),
        external_metrics=ExternalMetrics(
            port=args.external_metrics_port,
            cert_file=args.tls_cert_file,
            key_file=args.tls_private_key_file,
        ),
    )


def run(args: argparse.Namespace) -> int:
    import logging

    import kopf
    from prometheus_client import start_http_server
    from pydantic import ValidationError

    from segue.operator.handlers import build_registry
    from segue.operator.metrics import OperatorMetrics
    from segue.operator.reconcile import Reconciler
    from segue.operator.replica import Replica
    from segue.stderr_json import wrap_stderr

    try:
        settings = settings_from(args)
    except ValidationError as exc:
        print(f"segue operator: {exc}", file=sys.stderr)
        return 2
    try:
        api_client = _pooled(_api_client(args.kubeconfig))
    except NoCluster as exc:
        print(f"segue operator: {exc}", file=sys.stderr)
        return 2
    level = settings.log_level
    kopf.configure(
        verbose=level == "debug",
        quiet=level in ("warning", "error"),
        log_format=kopf.LogFormat.JSON if settings.log_format == "json" else kopf.LogFormat.FULL,
    )
    logging.getLogger().setLevel(level.upper())
    if level != "debug":
        # Kopf says "Handler ... succeeded" at INFO for every watch event it hands to a
        # handler: one line per pod event, thousands a minute in a fleet, written under the
        # logging lock from Kopf's event loop thread, which then waits behind every step
        # thread that logs (bench/fleet). Its warnings and errors stay.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    if settings.log_format == "json":  # librdkafka's own stderr lines as objects too
        real = wrap_stderr(dict, "segue.operator.stderr")
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(real)
    metrics = OperatorMetrics()
    try:
        if settings.metrics_port:
            start_http_server(
                settings.metrics_port, settings.bind_address, registry=metrics.registry
            )
        replica = Replica(api_client, settings)
    except OSError as exc:  # a port taken: say which flag, not a traceback
        print(
            f"segue operator: cannot listen on {settings.bind_address} (--metrics-port "
            f"{settings.metrics_port}, --health-port {settings.health_port}): {exc.strerror}; "
            "another process has the port? choose another, or 0 for none",
            file=sys.stderr,
        )
        return 2
    if settings.external_metrics.port and not _serve_external_metrics(
        api_client, settings, replica
    ):
        return 2
    if not replica.lead():
        return 0  # asked to stop while standing by: nothing was held
    metrics.leader.set(1)
    if settings.namespaces and not replica.await_crd(api_client):
        replica.step_down()
        return 0  # asked to stop while waiting for the CRD
    reconciler = Reconciler(api_client, settings, metrics)
    # The board the reconcile steps fill (the autoscale signal); served from now on.
    replica.signals = reconciler.signals
    try:
        kopf.run(
            registry=build_registry(reconciler, settings),
            standalone=True,
            clusterwide=not settings.namespaces,
            namespaces=settings.namespaces,
            ready_flag=replica.watching,
        )
    finally:
        replica.step_down()
        reconciler.observer.close()
        reconciler.history.flush()
        metrics.leader.set(0)
    return 0


def _serve_external_metrics(api_client: Any, settings: Any, replica: Replica) -> bool:
    """Start the external metrics API on every replica (docs/operator.md says why);
    False, having said why, if its TLS settings cannot be read."""
    from segue.operator import metricsapi
    from segue.podenv import pod_path

    ext = settings.external_metrics
    try:  # a mounted Secret's files: pod paths (the pod runner maps them)
        credentials = metricsapi.Credentials(
            api_client, pod_path(ext.cert_file), pod_path(ext.key_file)
        )
    except Exception as exc:  # no file, a bad key, no RBAC for the ConfigMap, no aggregation
        print(f"segue operator: external metrics API: {exc}", file=sys.stderr)
        return False
    metricsapi.serve(settings.bind_address, ext.port, credentials, replica.board)
    return True


def _api_client(kubeconfig: str | None) -> Any:
    """The cluster to talk to, found as controllers find theirs: ``--kubeconfig``, else
    ``KUBECONFIG``, else the pod's ServiceAccount in a pod, else ``~/.kube/config``.
    Raises :class:`NoCluster` saying what was tried."""
    from kubernetes import config as kube_config
    from kubernetes.config.config_exception import ConfigException

    from segue.podenv import new_incluster_client

    loader: Any = kube_config.new_client_from_config  # untyped in kubernetes' package
    home = os.path.expanduser("~/.kube/config")
    try:
        if kubeconfig or os.environ.get("KUBECONFIG"):
            return loader(config_file=kubeconfig)  # None: KUBECONFIG, merged as kubectl does
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return new_incluster_client()
        if os.path.exists(home):
            return loader(config_file=home)
    except (ConfigException, OSError, ValueError) as exc:
        raise NoCluster(f"cannot load the cluster's credentials: {exc}") from exc
    raise NoCluster(
        "no cluster to talk to: not in a pod (KUBERNETES_SERVICE_HOST is unset), no "
        f"KUBECONFIG and no {home}; give --kubeconfig FILE"
    )


# Connections to the API server the client keeps open. The client's default is CPUs x 5
# (10 on 2 cores), shared by every app's loop: with more loops than that in a request at
# once, each request beyond it opens a new TLS connection and drops it after, with a
# "Connection pool is full" warning (bench/fleet: 3,336 in 5 minutes at 100-500 apps).
API_CONNECTIONS = 128


def _pooled(api_client: Any) -> Any:
    """``api_client`` keeping up to :data:`API_CONNECTIONS` connections open."""
    from kubernetes.client import rest

    api_client.configuration.connection_pool_maxsize = API_CONNECTIONS
    api_client.rest_client = rest.RESTClientObject(api_client.configuration)
    return api_client


class NoCluster(Exception):
    """No credentials for any cluster were found, or they do not load."""
