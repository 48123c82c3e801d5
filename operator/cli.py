"""``segue operator``: run the operator (the container image's entry point).

Flags and ``SEGUE_OPERATOR_*`` variables fill :class:`~.settings.OperatorSettings`;
``--kubeconfig`` (or ``KUBECONFIG``) points at a cluster from outside, otherwise the
pod's ServiceAccount is used. Serves the operator's Prometheus metrics on
``--metrics-port`` and runs Kopf until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

HELP = "run the operator that scales StreamApps"


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--kubeconfig", help="kubeconfig file (default: KUBECONFIG, then in-cluster)")
    add(
        "--namespace",
        "-n",
        action="append",
        default=[],
        help="watch only this namespace (repeatable; default: all namespaces)",
    )
    add(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("SEGUE_OPERATOR_METRICS_PORT", "9401")),
        help="port of the operator's /metrics (0: off; env SEGUE_OPERATOR_METRICS_PORT)",
    )
    add(
        "--health-port",
        type=int,
        default=int(os.environ.get("SEGUE_OPERATOR_HEALTH_PORT", "0")),
        help="port of Kopf's /healthz liveness endpoint (0: off)",
    )
    add(
        "--busy-interval",
        type=float,
        default=0.5,
        help="seconds between looks while an app is scaling (default 0.5)",
    )
    add(
        "--idle-interval",
        type=float,
        default=5.0,
        help="seconds between looks while an app is settled; changes wake it (default 5)",
    )
    add(
        "--log-format",
        choices=["plain", "json"],
        default=os.environ.get("SEGUE_OPERATOR_LOG_FORMAT", "plain"),
    )
    add("--verbose", action="store_true", help="debug logging")


def run(args: argparse.Namespace) -> int:
    import kopf
    from kubernetes import config as kube_config
    from prometheus_client import start_http_server

    from segue.operator.handlers import build_registry
    from segue.operator.metrics import OperatorMetrics
    from segue.operator.reconcile import Reconciler
    from segue.operator.settings import OperatorSettings

    settings = OperatorSettings(
        namespaces=tuple(args.namespace),
        busy_interval=args.busy_interval,
        idle_interval=args.idle_interval,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
        log_format=args.log_format,
    )
    if args.kubeconfig:
        os.environ["KUBECONFIG"] = args.kubeconfig
    kopf.configure(
        verbose=args.verbose,
        log_format=kopf.LogFormat.JSON if settings.log_format == "json" else kopf.LogFormat.FULL,
    )
    if os.environ.get("KUBECONFIG"):
        loader: Any = kube_config.new_client_from_config  # untyped in kubernetes' package
        api_client = loader(config_file=os.environ["KUBECONFIG"])
    else:
        from segue.podenv import new_incluster_client

        api_client = new_incluster_client()
    metrics = OperatorMetrics()
    if settings.metrics_port:
        start_http_server(settings.metrics_port, settings.metrics_host, registry=metrics.registry)
    reconciler = Reconciler(api_client, settings, metrics)
    registry = build_registry(reconciler, settings)
    try:
        kopf.run(
            registry=registry,
            standalone=True,
            clusterwide=not settings.namespaces,
            namespaces=settings.namespaces,
            liveness_endpoint=(
                f"http://0.0.0.0:{settings.health_port}/healthz" if settings.health_port else None
            ),
        )
    finally:
        reconciler.observer.close()
    return 0
