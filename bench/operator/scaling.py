"""Scaling a stateful app under the operator: learners (Segue) against an ungated move
(the peer), side by side in one run on one local stack.

The app is Tally (``segue.worker.apps.tally``: every output record says who counted it
and when), prefilled so each task has changelog state, under steady input. Each mode
scales 2 -> 4 -> 2 pods through the /scale subresource and waits for ``Balanced``:

- ``learners``: Segue's default path. New owners restore in the background and a task
  is handed over once its learner is within ``acceptableRecoveryLag``.
- ``ungated``: the same operator with ``acceptableRecoveryLag`` so large that any
  reported copy counts as caught up: a task is handed over on the first look after its
  new owner reports, and the new owner restores the rest before it processes (a
  sticky assignor without KIP-441's catch-up gate; docs/benchmarks.md says how this
  differs from a pure stop-the-world move).

A task's pause is the gap, in its committed output, between the last record of its
old owner and the first of its new one; the output is checked exact in both modes.

    .venv/bin/python -m bench.operator.scaling [--partitions 12] [--prefill 200000]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from bench.operator.cluster import new_namespace, operator_stack
from segue.stack.apps import Apps
from segue.stack.localstack import LocalStack
from tests.operator.e2e import OperatorProcess, streamapp, wait_for, worker_command
from tests.worker.harness import create_topics, json_values, read_committed
from tests.worker.scenarios import SteadyProducer, check_exact

MODES = {"learners": 1_000, "ungated": 10**15}


def prefill(bootstrap: str, topic: str, partitions: int, keys: int, records: int) -> dict[str, int]:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    sent: dict[str, int] = {}
    for i in range(records):
        j = i % keys
        while True:
            try:
                producer.produce(topic, key=f"k{j}", value=str(i), partition=j % partitions)
                break
            except BufferError:
                producer.poll(0.1)
        sent[f"k{j}"] = sent.get(f"k{j}", 0) + 1
    assert producer.flush(60) == 0
    return sent


def run_mode(stack: LocalStack, api: Any, mode: str, args: argparse.Namespace, log: Path) -> str:
    bootstrap = stack.kafka.bootstrap_servers if stack.kafka else ""
    namespace = f"bench-{mode}"
    new_namespace(api, namespace)
    tag = uuid.uuid4().hex[:6]
    source, output = f"in-{tag}", f"out-{tag}"
    create_topics(bootstrap, {source: args.partitions, output: args.partitions})
    sent = prefill(bootstrap, source, args.partitions, args.keys, args.prefill)
    body = streamapp(
        "tally",
        application_id=f"tally-{tag}",
        bootstrap=bootstrap,
        command=worker_command("segue.worker.apps.tally:topology", input=source, output=output),
        replicas=2,
        scaling={"acceptableRecoveryLag": MODES[mode], "maxWarmupReplicas": args.partitions},
    )
    if args.fence_delay_ms is not None:
        env = body["spec"]["template"]["env"]
        env.append({"name": "SEGUE_FENCE_DELAY_MS", "value": str(args.fence_delay_ms)})
    apps = Apps(api, namespace)
    operator = OperatorProcess(stack.kube.kubeconfig if stack.kube else Path(), namespace, log)
    operator.start()
    why = lambda: operator.logs()[-3000:]  # noqa: E731
    try:
        apps.create(body)
        wait_for("2 pods balanced", lambda: apps.balanced("tally", 2), 600, why)
        read_committed(bootstrap, output, lambda r: len(r) >= args.prefill, 600)
        producer = SteadyProducer(bootstrap, source, args.partitions, args.keys, args.rate)
        producer.start()
        time.sleep(3)
        apps.scale("tally", 4)
        up = wait_for("4 pods balanced", lambda: apps.balanced("tally", 4), 600, why)
        time.sleep(3)
        down_at = time.time()
        apps.scale("tally", 2)
        down = wait_for("2 pods balanced", lambda: apps.balanced("tally", 2), 600, why)
        time.sleep(2)
        producer.stop()
    finally:
        operator.stop()
    for key, n in producer.sent.items():
        sent[key] = sent.get(key, 0) + n
    total = sum(sent.values())
    records = read_committed(bootstrap, output, lambda r: len(r) >= total, 300)
    check_exact(records, sent)
    pauses = handover_pauses(json_values(records), args.partitions)
    up_pauses = sorted(gap for at, gap in pauses if at < down_at)
    down_pauses = sorted(gap for at, gap in pauses if at >= down_at)
    return f"| {mode} | {up:.1f} | {ms(up_pauses)} | {down:.1f} | {ms(down_pauses)} | exact |"


def handover_pauses(outputs: list[dict[str, Any]], partitions: int) -> list[tuple[float, float]]:
    """(when, gap) for every change of owner in a task's committed output."""
    by_task: dict[int, list[dict[str, Any]]] = {}
    for doc in outputs:
        by_task.setdefault(int(doc["key"][1:]) % partitions, []).append(doc)
    found = []
    for docs in by_task.values():
        docs.sort(key=lambda d: d["at"])
        for before, after in itertools.pairwise(docs):
            if before["by"] != after["by"]:
                found.append((after["at"], after["at"] - before["at"]))
    return found


def ms(gaps: list[float]) -> str:
    """``n`` pauses: median / max in ms."""
    if not gaps:
        return "0 | - | -"
    return f"{len(gaps)} | {statistics.median(gaps) * 1000:.0f} | {max(gaps) * 1000:.0f}"


def main(args: argparse.Namespace) -> str:
    rows = []
    with operator_stack() as (stack, api), tempfile.TemporaryDirectory() as tmp:
        for mode in MODES:
            log = Path(tmp) / mode
            log.mkdir()
            rows.append(run_mode(stack, api, mode, args, log))
            print(rows[-1], flush=True)
    head = (
        f"Tally, {args.partitions} tasks, {args.prefill:,} records prefilled over {args.keys} "
        f"keys, {args.rate:.0f} records/s during scaling; 2 -> 4 -> 2 pods"
        + (f"; fence delay {args.fence_delay_ms} ms" if args.fence_delay_ms is not None else "")
        + ".\n\n"
        "| mode | 2->4 balanced s | handovers | pause median ms | max ms | "
        "4->2 balanced s | handovers | pause median ms | max ms | output |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(rows)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--prefill", type=int, default=200_000)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--fence-delay-ms", type=int, help="the workers' (default: theirs, 50)")
    print(main(parser.parse_args()))


if __name__ == "__main__":
    cli()
