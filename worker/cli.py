"""``segue worker``: run one stream application's worker process.

Flags override the environment the operator sets in the pod template
(``config``; docs/worker.md lists both). The process serves ``/metrics``,
``/healthz``, ``/readyz`` and ``/topology`` (``http``, ``describe``), follows
its assignment ConfigMap (``watch``) and runs the tasks it names (``runtime``).
SIGTERM (and SIGINT) finish or abort open transactions, checkpoint and exit 0
within ``--shutdown-timeout``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

HELP = "run a stream application's worker process"
LOG_FORMAT_ENV = "SEGUE_LOG_FORMAT"  # the pod's default for --log-format (segue.worker.logs)


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--app",
        required=True,
        metavar="MODULE:OBJECT",
        help="the application: a segue.worker.Topology, or a function returning one",
    )
    add(
        "--app-arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="keyword argument for the function named by --app (repeatable)",
    )
    add(
        "--application-id",
        help="Kafka application id (env SEGUE_APPLICATION_ID; default: the topology's)",
    )
    add("--member", help="member id, the pod name (env POD_NAME)")
    add("--namespace", help="namespace of the assignment ConfigMap (env POD_NAMESPACE)")
    add(
        "--assignment-configmap",
        help="assignment ConfigMap name (env SEGUE_ASSIGNMENT_CONFIGMAP, "
        "or <SEGUE_STREAMAPP>-assignment)",
    )
    add("--bootstrap-servers", help="Kafka bootstrap servers (env SEGUE_BOOTSTRAP_SERVERS)")
    add(
        "--state-dir",
        help="state directory inside the pod (env SEGUE_STATE_DIR; default /var/lib/segue/state)",
    )
    add("--metrics-host", help="address for /metrics (env POD_IP; default 0.0.0.0)")
    add(
        "--metrics-port",
        type=int,
        help="port for /metrics, /healthz, /readyz (env SEGUE_METRICS_PORT; default 9400)",
    )
    add(
        "--kubeconfig",
        help="kubeconfig to read the assignment with (env SEGUE_KUBECONFIG; "
        "default: the pod's ServiceAccount)",
    )
    add(
        "--processing-guarantee",
        choices=["exactly_once", "at_least_once"],
        help="env SEGUE_PROCESSING_GUARANTEE; default exactly_once",
    )
    add("--commit-interval-ms", type=int, help="env SEGUE_COMMIT_INTERVAL_MS; default 100")
    add(
        "--fence-delay-ms",
        type=int,
        help="wait before fencing a task's previous owner, so it can commit first "
        "(env SEGUE_FENCE_DELAY_MS; default 50)",
    )
    add(
        "--standby-restore-rate",
        type=float,
        help="records/s restored for standbys and learners, to spare the broker and disk; "
        "active tasks are never limited (env SEGUE_STANDBY_RESTORE_RATE; default: no limit)",
    )
    add(
        "--shutdown-timeout",
        type=float,
        help="seconds to finish on SIGTERM (env SEGUE_SHUTDOWN_TIMEOUT; default 20)",
    )
    add(
        "--kafka-call-bound",
        type=float,
        help="seconds any blocking Kafka call may take before the worker reports itself "
        "unhealthy (env SEGUE_KAFKA_CALL_BOUND; default: the call's timeout + 5, + 2 for "
        "a running task's commit calls)",
    )
    add(
        "--stuck-exit-after",
        type=float,
        help="seconds a Kafka call on the main loop may stay stuck past its bound before "
        "the worker exits; a task's stuck commit is abandoned instead "
        "(env SEGUE_STUCK_EXIT_AFTER; default 2)",
    )
    add(
        "--kafka",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra librdkafka setting for every client (repeatable)",
    )
    add("--log-level", default="INFO", help="default INFO")
    add(
        "--log-format",
        choices=["plain", "json"],
        default=os.environ.get(LOG_FORMAT_ENV, "plain"),
        help="plain: one human line per record; json: one object per line with app, pod, "
        f"task and generation fields (env {LOG_FORMAT_ENV}; default plain)",
    )


def load_topology(spec: str, kwargs: dict[str, str] | None = None) -> Any:
    from segue.worker.topology import Topology

    module_name, _, attr = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not isinstance(target, Topology) and callable(target):
        target = target(**(kwargs or {}))
    elif kwargs:
        raise SystemExit(f"--app {spec} is not a function: --app-arg cannot be used")
    if not isinstance(target, Topology):
        raise SystemExit(f"--app {spec}: {type(target).__name__} is not a segue.worker.Topology")
    return target


def run(args: argparse.Namespace) -> int:
    import logging

    from pydantic import ValidationError

    from segue.worker import config as worker_config
    from segue.worker import logs
    from segue.worker.describe import describe
    from segue.worker.freshness import Freshness
    from segue.worker.http import serve
    from segue.worker.metrics import WorkerMetrics
    from segue.worker.runtime import Worker
    from segue.worker.watch import AssignmentWatcher
    from segue.worker.watchdog import GRACE, WATCHDOG, monitor

    logs.configure(args.log_level, "plain", "", "")  # until the app and pod are known
    log = logging.getLogger("segue.worker")
    kafka_extra = dict(item.split("=", 1) for item in args.kafka)
    flags = {
        name: getattr(args, name)
        for name in (
            "app",
            "application_id",
            "member",
            "namespace",
            "assignment_configmap",
            "bootstrap_servers",
            "state_dir",
            "metrics_host",
            "metrics_port",
            "kubeconfig",
            "processing_guarantee",
            "commit_interval_ms",
            "fence_delay_ms",
            "standby_restore_rate",
            "shutdown_timeout",
            "kafka_call_bound",
            "stuck_exit_after",
        )
    }
    flags["kafka"] = kafka_extra or None
    try:
        config = worker_config.from_sources(flags)
    except ValidationError as exc:
        problems = "\n".join(worker_config.explain(exc))
        print(f"segue worker: invalid configuration:\n{problems}", file=sys.stderr)
        return 2
    config = config.model_copy(update={"state_dir": Path(_pod_path(str(config.state_dir)))})
    _use_pod_tmpdir()
    api = _endpoint(config.kubeconfig)
    topology = load_topology(config.app, dict(a.split("=", 1) for a in args.app_arg))
    WATCHDOG.configure(GRACE, config.kafka_call_bound)
    monitor(WATCHDOG, config.stuck_exit_after)
    metrics = WorkerMetrics()
    application_id = config.application_id or topology.application_id  # as runtime.Worker
    logs.configure(args.log_level, args.log_format, application_id, config.member)
    described = json.dumps(describe(topology, application_id).document()).encode()
    server = serve(metrics, config.metrics_host, config.metrics_port, described)
    log.info("member %s serving metrics on %s:%d", config.member, *server.server_address[:2])
    worker = Worker(config, topology, metrics)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received signal %d: stopping", signum)
        worker.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    watcher = AssignmentWatcher(
        api,
        config.namespace,
        config.assignment_configmap,
        worker.offer,
        worker.count_error,
    )
    worker.tasks.confirm_with(Freshness(watcher.read, lambda: worker.generation).since)
    watcher.start()
    try:
        worker.run()
    finally:
        watcher.stop()
        server.shutdown()
    return 0


def _endpoint(kubeconfig: Path | None) -> Any:
    """The API server to read the assignment from; no way there ends the process."""
    from segue.worker.kubeapi import ApiError
    from segue.worker.watch import endpoint

    try:
        return endpoint(kubeconfig)
    except (ApiError, OSError) as exc:
        raise SystemExit(f"segue worker: no way to the API server: {exc}") from exc


def _use_pod_tmpdir() -> None:
    """Temp files (the Kubernetes client's, say) go to the pod's ``TMPDIR``.

    The operator mounts an emptyDir there because the root filesystem is read-only.
    Under the local pod runner that mount is a pod path like any other, so it is
    mapped with :func:`_pod_path`; a ``TMPDIR`` the pod does not mount (the runner's
    own, inherited) is left as it is."""
    import os
    import tempfile

    from segue.protocol.names import ENV_TMPDIR

    wanted = os.environ.get(ENV_TMPDIR)
    if not wanted:
        return
    mapped = _pod_path(wanted)
    if mapped != wanted and os.path.isdir(mapped):
        os.environ[ENV_TMPDIR] = mapped
        tempfile.tempdir = mapped


def _pod_path(path: str) -> str:
    """A path inside the pod, on the host (identity outside the local pod runner)."""
    from segue.podenv import pod_path

    return pod_path(path)
