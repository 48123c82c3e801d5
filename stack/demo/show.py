"""The show from start to end: the stack up, Segue installed, WordCount deployed on
prefilled state, steady input, the script played, then the tally, the report and the
JSON line; and, from any point, Ctrl-C (or SIGTERM) stops it all cleanly.

Ctrl-C raises ``KeyboardInterrupt`` in the main thread wherever it waits (a
``subprocess`` call kills its child first); the ``finally`` below then stops the
input, the watchers and the whole stack (the pod runner kills every pod, the operator
included, then the control plane and Kafka stop), with further Ctrl-C ignored until it
is done. Every process the show started runs in the stack's work dir, so a test can
check that none is left.
"""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubernetes import config

from segue.stack.apps import Apps, text_input
from segue.stack.demo import steps as script
from segue.stack.demo.cluster import APP, INPUT, OUTPUT, WORDS, Cluster, produce_lines
from segue.stack.demo.monitor import Monitor
from segue.stack.demo.report import timelines, write_html
from segue.stack.demo.tally import OutputReader, merge, pauses, summary
from segue.stack.demo.view import LiveView, PlainView, is_terminal
from segue.stack.localstack import LocalStack

NAMESPACE = "demo"


@dataclass(frozen=True)
class Options:
    """The show's settings: the full show's by default (the one home of the defaults
    ``segue stack demo --help`` names), ``--quick``'s with :data:`QUICK` over them."""

    steps: list[script.Step] = field(default_factory=lambda: script.parse_script(script.FULL))
    report: Path = Path("demo-report")
    workdir: Path | None = None  # None: a temporary one, removed at the end
    prefill: int = 200_000
    rate: float = 200.0
    partitions: int = 6
    settle_timeout: float = 300.0
    live: bool = field(default_factory=is_terminal)
    # 1, or 3 replicated as Segue runs in production: the full show on three paused a
    # handover 14 s in its one run so far (docs/demo.md), so not the default yet
    brokers: int = 1


# What ``--quick`` changes: a short script on a small prefill (~1.5 minutes).
QUICK: dict[str, Any] = {
    "steps": script.parse_script(script.QUICK),
    "prefill": 20_000,
    "settle_timeout": 180.0,
}


def _terminate(*_: Any) -> None:
    raise KeyboardInterrupt


def run(options: Options) -> int:
    for sig in (signal.SIGTERM, signal.SIGHUP):  # SIGHUP: its terminal closed
        signal.signal(sig, _terminate)
    started = time.time()
    log: list[str] = []
    stack = LocalStack(options.workdir, brokers=options.brokers)
    parts: list[Any] = []  # what to stop, last first
    try:
        print("starting the local stack (Kafka, Kubernetes, pod runner) ...", flush=True)
        stack.start()
        assert stack.kube is not None
        assert stack.kafka is not None
        kubeconfig, bootstrap = stack.kube.kubeconfig, stack.kafka.bootstrap_servers
        print(
            f"poke at it from another terminal:\n  export KUBECONFIG={kubeconfig}\n"
            f"  kubectl get sapp -n {NAMESPACE} -w\n"
            f"  kubectl describe sapp -n {NAMESPACE} {APP}\n"
            f"  kubectl logs -n {NAMESPACE} {APP}-0 -f",
            flush=True,
        )
        api: Any = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        apps = Apps(api, NAMESPACE)
        cluster = Cluster(
            api, kubeconfig, bootstrap, NAMESPACE, settle_timeout=options.settle_timeout
        )
        cluster.balanced = lambda n: apps.balanced(APP, n)
        return _show(options, cluster, apps, started=started, log=log, parts=parts)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping everything ...", flush=True)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # let the stop finish
            signal.signal(sig, signal.SIG_IGN)
        for part in reversed(parts):
            part.stop()
        stack.stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print(f"stopped ({time.time() - started:.0f}s in all).", flush=True)


def _show(
    options: Options, cluster: Cluster, apps: Any, *, started: float, log: list[str],
    parts: list[Any],
) -> int:  # fmt: skip
    def say(line: str) -> None:
        log.append(f"{time.time() - started:6.1f}s  {line}")
        (view.say if view is not None else print)(line)

    view: LiveView | PlainView | None = None
    marks: list[tuple[float, str]] = []
    say("helm install segue charts/segue (the operator, its CRD, the external metrics API)")
    installing = time.time()
    cluster.install()
    leader = cluster.await_operator()
    say(f"operator ready {time.time() - installing:.1f}s after helm install: {leader} leads")
    cluster.topics(options.partitions)
    say(f"prefilling {options.prefill:,} lines over {WORDS} words")
    sent = [produce_lines(cluster.bootstrap, options.prefill, words=WORDS, tag="p")]
    applied = time.time()
    group = cluster.deploy()
    say(f"kubectl apply -f examples/{APP}.yaml (2 pods)")
    monitor, output = _watchers(cluster, group)
    for part in (monitor, output):
        part.start()
        parts.append(part)
    view = LiveView(monitor, output, started) if options.live else PlainView(monitor, started)
    with view:
        cluster.settle(2)
        # balanced already needs Ready pods; the monitor's next look (twice a second) sees one
        _wait(lambda: monitor.first_ready is not None, 10, "the monitor seeing a Ready pod")
        first = {
            "apply_to_status_s": _since(applied, monitor.first_status),
            "apply_to_ready_s": _since(applied, monitor.first_ready),
        }
        say(
            f"the app had a status {first['apply_to_status_s']}s after the apply, its first "
            f"pod Ready {first['apply_to_ready_s']}s after"
        )
        _wait(lambda: output.count() >= options.prefill, options.settle_timeout, "prefill output")
        say(f"2 pods balanced, prefilled state counted; steady input at {options.rate:.0f}/s")
        producer = text_input(cluster.bootstrap, INPUT, WORDS, options.rate)
        producer.start()
        parts.append(producer)
        for i, step in enumerate(options.steps, 1):
            marks.append((time.time(), str(step)))
            say(f"step {i}/{len(options.steps)}: {step.describe()}")
            say(f"step {i}/{len(options.steps)}: {script.run_step(cluster, step)}")
        time.sleep(3)
        parts.remove(producer)
        sent.append(producer.stop())
        total = merge(*sent, *cluster.bursts)
        say(f"input stopped: {sum(total.values()):,} lines sent; reading the rest of the output")
        _wait(lambda: output.count() >= sum(total.values()), 120, "all output")
        balanced = apps.balanced(APP, cluster.replicas)
    parts.remove(output)
    records = output.stop()
    parts.remove(monitor)
    monitor.stop()
    result = summary(
        monitor.moves,
        records,
        total,
        balanced=balanced,
        replicas=cluster.replicas,
        hpa_replicas=cluster.hpa_replicas,
        steps=[str(s) for s in options.steps],
        **first,
        seconds=round(time.time() - started, 1),
    )
    return _report(options, result, monitor, records, marks=marks, log=log, started=started)


def _watchers(cluster: Cluster, group: str) -> tuple[Monitor, OutputReader]:
    """The monitor of the app and the reader of its output, wired to the cluster's
    steps (which ask whether a task runs, tell of a kill, and read the lag)."""
    monitor = Monitor(
        cluster.api,
        cluster.namespace,
        APP,
        bootstrap=cluster.bootstrap,
        group=group,
        input_topic=INPUT,
    )
    output = OutputReader(cluster.bootstrap, OUTPUT, f"demo-reader-{time.time_ns()}")
    cluster.running = lambda task: monitor.look is not None and task in monitor.look.owners()
    cluster.on_kill = monitor.killed.add
    cluster.lag = lambda: monitor.look.lag if monitor.look is not None else None
    return monitor, output


def _report(
    options: Options, result: dict[str, Any], monitor: Monitor, records: Any, *,
    marks: list[tuple[float, str]], log: list[str], started: float,
) -> int:  # fmt: skip
    """The report's HTML and PNGs, then the JSON line; the exit code it implies."""
    options.report.mkdir(parents=True, exist_ok=True)
    measured = pauses(monitor.moves, records)
    pngs = timelines(
        options.report, started, samples=monitor.samples, records=records, pauses=measured,
        marks=marks,
    )  # fmt: skip
    html = write_html(options.report, result, pngs=pngs, log=log, pauses=measured, start=started)
    print(f"report: {html}", flush=True)
    print(json.dumps(result), flush=True)
    ok = result["records_lost"] == 0 and result["records_duplicated"] == 0 and result["balanced"]
    return 0 if ok else 1


def _since(start: float, at: float | None) -> float | None:
    return round(at - start, 1) if at is not None else None


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        time.sleep(0.5)


def options_for(quick: bool, **given: Any) -> Options:
    """The full show's settings, or ``--quick``'s, then what was given: an argument
    given as None was left out, and keeps the default."""
    chosen = {k: v for k, v in given.items() if v is not None}
    return replace(Options(), **{**(QUICK if quick else {}), **chosen})
