"""The only I/O of ``segue status``: everything through the API server, nothing else.

The StreamApp, its pods and its Events are plain API reads; each pod's ``/metrics`` is
read through the API server's pod proxy (``pods/proxy``), so the command works from any
machine whose kubeconfig reaches the cluster, without a route to the pod network. The
API server proxies only to routable pod IPs (never loopback or link-local): where it
refuses, or a pod does not answer, that pod's row says why and the status fills it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from typing import Any

from segue.operator.api import GROUP, PLURAL, VERSION
from segue.operator.observe.scrape import WorkerReport, parse_worker_metrics
from segue.podenv import NAMESPACE_FILE
from segue.protocol.names import DEFAULT_METRICS_PORT, METRICS_PATH

from .build import Pod, Read
from .model import EventRow

PROXY_TIMEOUT = 3.0  # seconds for one pod's /metrics through the proxy
API_TIMEOUT = 10.0  # seconds for one read of the StreamApp, its pods or its events
PARALLEL = 8  # pods read at once


class NotFound(Exception):
    """No StreamApp of that name in that namespace."""


def connect(kubeconfig: str | None, context: str | None) -> tuple[Any, str]:
    """An API client and the namespace kubectl would use: the context's, else
    ``default``; in a pod with no kubeconfig, its service account and namespace."""
    from kubernetes import config as kubeconfigs

    config: Any = kubeconfigs  # the package's functions carry no annotations
    try:
        api = config.new_client_from_config(config_file=kubeconfig, context=context)
    except config.ConfigException:
        if kubeconfig or context:
            raise
        config.load_incluster_config()
        with open(NAMESPACE_FILE) as f:
            return _client(), f.read().strip()
    contexts, current = config.list_kube_config_contexts(config_file=kubeconfig)
    chosen = next((c for c in contexts if c["name"] == context), current) if context else current
    return api, ((chosen or {}).get("context") or {}).get("namespace") or "default"


def _client() -> Any:
    from kubernetes import client

    return client.ApiClient()


def read(api: Any, namespace: str, app: str) -> Read:
    """The StreamApp, its pods, its Events and every running pod's metrics page."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    # The client's typed stubs say every field may be None; the API server fills these.
    custom: Any = client.CustomObjectsApi(api)
    core: Any = client.CoreV1Api(api)
    try:
        obj = custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, app, _request_timeout=API_TIMEOUT
        )
    except ApiException as exc:
        if exc.status == 404:
            raise NotFound(f"no StreamApp {app!r} in namespace {namespace!r}") from exc
        raise
    selector = (obj.get("status") or {}).get("selector") or f"segue.dev/app={app}"
    port = int((obj.get("spec") or {}).get("metricsPort") or DEFAULT_METRICS_PORT)
    pods: list[Pod] = []
    reports: dict[str, WorkerReport | str] = {}
    running: list[str] = []
    for item in sorted(
        core.list_namespaced_pod(
            namespace, label_selector=selector, _request_timeout=API_TIMEOUT
        ).items,
        key=lambda p: p.metadata.name,
    ):
        name, deleting = item.metadata.name, item.metadata.deletion_timestamp is not None
        ready = any(c.type == "Ready" and c.status == "True" for c in item.status.conditions or [])
        pods.append(Pod(name, ready, deleting))
        if item.status.phase == "Running" and not deleting:
            running.append(name)
        else:
            reports[name] = f"pod {item.status.phase or 'Pending'}" + (" (deleting)" * deleting)
    if running:  # one pod proxy call each, side by side: a slow pod delays no other
        with ThreadPoolExecutor(max_workers=min(len(running), PARALLEL)) as pool:
            pages = pool.map(lambda pod: metrics(core, namespace, pod, port), running)
            reports.update(zip(running, pages, strict=True))
    selector = f"involvedObject.name={app},involvedObject.kind=StreamApp"
    listed = core.list_namespaced_event(
        namespace, field_selector=selector, _request_timeout=API_TIMEOUT
    ).items
    events = [_event(e) for e in listed]
    return Read(app, namespace, obj, pods, events, reports)


def metrics(core: Any, namespace: str, pod: str, port: int) -> WorkerReport | str:
    """One pod's parsed ``/metrics`` through the pod proxy, or why it could not be read."""
    from kubernetes.client.exceptions import ApiException

    try:
        answer = core.connect_get_namespaced_pod_proxy_with_path(
            f"{pod}:{port}", namespace, METRICS_PATH.lstrip("/"),
            _preload_content=False, _request_timeout=PROXY_TIMEOUT,
        )  # fmt: skip
        return parse_worker_metrics(answer.data.decode("utf-8"))
    except ApiException as exc:
        return f"pod proxy: HTTP {exc.status} {_first_line(exc.body) or exc.reason}"
    except ValueError as exc:
        return f"unreadable page: {exc}"
    except Exception as exc:  # a timeout or a refused connection, from urllib3
        return f"pod proxy: {type(exc).__name__}: {exc}"


def _first_line(body: Any) -> str:
    text = body.decode() if isinstance(body, bytes) else str(body or "")
    try:
        import json

        text = json.loads(text).get("message", text)
    except (ValueError, AttributeError):
        pass
    return text.strip().splitlines()[0][:160] if text.strip() else ""


def _event(e: Any) -> EventRow:
    when = e.last_timestamp or e.event_time or e.metadata.creation_timestamp
    last = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when is not None else None
    return EventRow(e.type or "Normal", e.reason or "", e.message or "", e.count or 1, last)
