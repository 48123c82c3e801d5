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
from dataclasses import dataclass
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
    steps: list[script.Step]
    report: Path
    workdir: Path | None
    prefill: int
    rate: float
    partitions: int
    settle_timeout: float
    live: bool


def _terminate(*_: Any) -> None:
    raise KeyboardInterrupt


def run(options: Options) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    started = time.time()
    log: list[str] = []
    stack = LocalStack(options.workdir)
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
        signal.signal(signal.SIGINT, signal.SIG_IGN)
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
    cluster.install()
    cluster.topics(options.partitions)
    say(f"prefilling {options.prefill:,} lines over {WORDS} words")
    sent = [produce_lines(cluster.bootstrap, options.prefill, words=WORDS, tag="p")]
    group = cluster.deploy()
    say(f"kubectl apply -f examples/{APP}.yaml (2 pods)")
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
    for part in (monitor, output):
        part.start()
        parts.append(part)
    view = LiveView(monitor, output, started) if options.live else PlainView(monitor, started)
    with view:
        cluster.settle(2)
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
        seconds=round(time.time() - started, 1),
    )
    options.report.mkdir(parents=True, exist_ok=True)
    measured = pauses(monitor.moves, records)
    pngs = timelines(
        options.report, started, samples=monitor.samples, records=records, pauses=measured,
        marks=marks,
    )  # fmt: skip
    html = write_html(options.report, result, pngs=pngs, log=log, pauses=measured, start=started)
    print(f"report: {html}", flush=True)
    print(json.dumps(result), flush=True)
    ok = result["records_lost"] == 0 and result["records_duplicated"] == 0 and balanced
    return 0 if ok else 1


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        time.sleep(0.5)


def options_for(quick: bool, **given: Any) -> Options:
    """The full show's settings, or ``--quick``'s (~2 minutes), then what was given."""
    base: dict[str, Any] = {
        "steps": script.parse_script(script.QUICK if quick else script.FULL),
        "prefill": 20_000 if quick else 200_000,
        "rate": 200.0,
        "partitions": 6,
        "settle_timeout": 180.0 if quick else 300.0,
        "live": is_terminal(),
    }
    base.update({k: v for k, v in given.items() if v is not None})
    return Options(**base)
