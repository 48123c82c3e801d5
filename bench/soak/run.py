"""Soak: a seeded half hour of scale events, pod kills and broker restarts under input.

Tally (every output record says who counted it, and when) runs under the operator on
one local stack with prefilled state and steady input; ``plan.schedule`` decides the
events from the seed, this module plays them, waits after each for the app to say it
is balanced again, samples the operator's memory, and at the end counts every key's
output against what was sent (lost, counted twice), the handovers and their pauses
(the gap in a task's output between its old and its new owner; bench/operator).
Not in CI: docs/benchmarks.md, "Soak", has a run and its command.

    .venv/bin/python -m bench.soak.run [--minutes 30] [--every 60] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.progress import Progress

from bench.operator.cluster import ROOT, new_namespace, operator_stack
from bench.operator.scaling import handover_pauses, prefill
from bench.soak.memory import RssSampler, plot
from bench.soak.plan import Event, lost_and_duplicated, percentile, schedule
from segue.stack.apps import Apps
from segue.stack.localstack import LocalStack
from tests.operator.e2e import OperatorProcess, streamapp, wait_for, worker_command
from tests.worker.harness import create_topics, json_values, read_committed
from tests.worker.scenarios import SteadyProducer

APP = "tally"


def play(stack: LocalStack, apps: Apps, event: Event, replicas: int) -> int:
    """Do one event; the replica count the app should settle at."""
    if event.kind == "scale":
        apps.scale(APP, event.arg)
        return event.arg
    if event.kind == "kill":
        pods = sorted(apps.pods(APP))
        if pods:  # as `kubectl delete pod --force --grace-period=0`: no goodbye
            victim = pods[event.arg % len(pods)]
            apps.core.delete_namespaced_pod(victim, apps.namespace, grace_period_seconds=0)
        return replicas
    assert stack.kafka is not None
    stack.kafka.restart(downtime=5.0)
    return replicas


def settle(apps: Apps, replicas: int, bound: float) -> float | None:
    """Seconds until the app says it is balanced at ``replicas``; None past ``bound``."""
    start = time.monotonic()
    while time.monotonic() - start < bound:
        try:
            if apps.balanced(APP, replicas):
                return time.monotonic() - start
        except Exception:  # the apiserver may blink (a broker restart, not it); keep looking
            pass
        time.sleep(0.5)
    return None


@dataclass
class Running:
    apps: Apps
    operator: OperatorProcess
    bootstrap: str
    source: str
    output: str
    sent: dict[str, int]  # the prefill; the steady input is added at the end
    memory: RssSampler  # the operator's, not started yet
    replicas: int = 0


def start_app(stack: LocalStack, api: Any, args: argparse.Namespace, logs: Path) -> Running:
    """Tally prefilled and balanced under its own operator, before any input flows."""
    assert stack.kafka is not None
    assert stack.kube is not None
    bootstrap = stack.kafka.bootstrap_servers
    new_namespace(api, "soak")
    tag = uuid.uuid4().hex[:6]
    source, output = f"in-{tag}", f"out-{tag}"
    create_topics(bootstrap, {source: args.partitions, output: args.partitions})
    sent = prefill(bootstrap, source, args.partitions, args.keys, args.prefill)
    body = streamapp(
        APP,
        application_id=f"tally-{tag}",
        bootstrap=bootstrap,
        command=worker_command("segue.worker.apps.tally:topology", input=source, output=output),
        replicas=args.replicas,
        scaling={"maxWarmupReplicas": args.partitions},
    )
    apps = Apps(api, "soak")
    operator = OperatorProcess(stack.kube.kubeconfig, "soak", logs).start()
    apps.create(body)
    wait_for("first balance", lambda: apps.balanced(APP, args.replicas), 600, operator.logs)
    read_committed(bootstrap, output, lambda r: len(r) >= args.prefill, 600)
    assert operator.proc is not None
    return Running(
        apps, operator, bootstrap, source, output, sent, RssSampler(operator.proc.pid, 5.0)
    )


def play_all(
    stack: LocalStack, run: Running, events: list[Event], args: argparse.Namespace
) -> list[tuple[Event, float | None]]:
    """Each event at its time, then until balanced again (bounded by three intervals)."""
    settled: list[tuple[Event, float | None]] = []
    start, replicas = time.monotonic(), args.replicas
    with Progress(transient=False) as progress:
        bar = progress.add_task("soak", total=args.minutes * 60)
        for event in [*events, None]:
            due = event.at if event is not None else args.minutes * 60
            while time.monotonic() - start < due:
                progress.update(bar, completed=time.monotonic() - start)
                time.sleep(0.5)
            if event is None:
                break
            run.memory.mark(f"{event.kind} {event.arg}")
            replicas = play(stack, run.apps, event, replicas)
            took = settle(run.apps, replicas, args.every * 3)
            settled.append((event, took))
            progress.console.print(
                f"{event.at:7.1f}s {event.kind:6} {event.arg}: "
                + (f"balanced in {took:.1f}s" if took is not None else "NOT balanced")
            )
    run.replicas = replicas
    return settled


def soak(stack: LocalStack, api: Any, args: argparse.Namespace, logs: Path) -> dict[str, Any]:
    run = start_app(stack, api, args, logs)
    run.memory.start()
    events = schedule(args.seed, args.minutes, args.every, args.replicas, args.max_replicas)
    try:
        producer = SteadyProducer(run.bootstrap, run.source, args.partitions, args.keys, args.rate)
        producer.start()
        run.memory.mark("input")
        settled = play_all(stack, run, events, args)
        producer.stop()
        final = settle(run.apps, run.replicas, 300)
    finally:
        run.operator.stop()
        run.memory.stop()
    for key, n in producer.sent.items():
        run.sent[key] = run.sent.get(key, 0) + n
    total = sum(run.sent.values())
    docs = json_values(read_committed(run.bootstrap, run.output, lambda r: len(r) >= total, 300))
    counts: dict[str, list[int]] = {}
    for doc in docs:
        counts.setdefault(doc["key"], []).append(doc["count"])
    lost, duplicated = lost_and_duplicated(counts, run.sent)
    gaps = [gap * 1000 for _, gap in handover_pauses(docs, args.partitions)]
    plot(run.memory, args.out / "operator-memory.png")
    took = [t for _, t in settled if t is not None]
    return {
        "seed": args.seed,
        "minutes": args.minutes,
        "events": {k: sum(1 for e in events if e.kind == k) for k in ("scale", "kill", "broker")},
        "not_balanced_after": [f"{e.at:.0f}s {e.kind}" for e, t in settled if t is None],
        "settle_p50_s": round(percentile(took, 50), 1),
        "settle_max_s": round(max(took, default=0.0), 1),
        "records": total,
        "records_lost": lost,
        "records_duplicated": duplicated,
        "handovers": len(gaps),
        "pause_p50_ms": round(percentile(gaps, 50)),
        "pause_p99_ms": round(percentile(gaps, 99)),
        "pause_max_ms": round(max(gaps, default=0.0)),
        "operator_rss_mib": run.memory.summary(),
        "balanced": final is not None,
    }


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the soak")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between events")
    parser.add_argument("--seed", type=int, default=1, help="decides the events")
    parser.add_argument("--partitions", type=int, default=12, help="tasks of the app")
    parser.add_argument("--replicas", type=int, default=2, help="pods at the start")
    parser.add_argument("--max-replicas", type=int, default=6, help="most pods a scale asks")
    parser.add_argument("--keys", type=int, default=2000, help="distinct keys of the input")
    parser.add_argument("--prefill", type=int, default=100_000, help="records before the soak")
    parser.add_argument("--rate", type=float, default=300.0, help="input records/s")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "soak")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with operator_stack() as (stack, api), tempfile.TemporaryDirectory() as tmp:
        result = soak(stack, api, args, Path(tmp))
    (args.out / "soak.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    cli()
