"""One operator for a fleet (issue 27, item 6): what one ``segue operator`` with its
default settings costs as StreamApps grow, and how fast it answers a scale.

On one local stack (a real kube-apiserver, controller-manager and etcd, and a Kafka
broker), with the pods' side played by stubs (``bench.fleet.stubpods``: one process binds
every pod, marks it Running and serves the worker's metrics contract on its address),
for each fleet size (default 10, 100, 500 apps of 4 pods; apps are added between sizes):

1. wait until every app is ``Balanced`` with a published generation;
2. for ``--window`` seconds of a settled fleet: the operator's CPU (% of one core) and
   resident memory, and its API requests per second (its own FlowSchema's counter,
   ``cluster.operator_requests``);
3. ``--samples`` scales through the ``/scale`` subresource (what ``kubectl scale`` sends),
   one every ``--every`` seconds, each on an app that is settled, alternately 4 -> 5 and
   back 5 -> 4; the latency is from the request to the watch event of the app's next
   published generation (its assignment ConfigMap); CPU and requests are read over this
   phase too.

    flock /tmp/segue-heavy.lock .venv/bin/python -m bench.fleet.run --sizes 10,100,500
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.fleet.cluster import create_topics, fleet_stack, operator_identity, operator_requests
from bench.fleet.observe import HZ, FleetView, cpu_ticks, machine_busy, rss_mib
from bench.fleet.stats import cpu_percent, rate
from bench.fleet.trials import scale_trials, summary
from bench.operator.cluster import new_namespace
from segue.operator.api import GROUP, PLURAL, VERSION
from segue.stack.process import ManagedProcess, free_port

NAMESPACE = "fleet"
INPUT = "fleet-input"
STORE = "store"
PODS = 4
TASKS = 4


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def app_name(i: int) -> str:
    return f"app-{i:04d}"


def manifest(i: int, bootstrap: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "StreamApp",
        "metadata": {"name": app_name(i)},
        "spec": {
            "replicas": PODS,
            "applicationId": f"fleet-{i:04d}",
            "kafka": {"bootstrapServers": bootstrap},
            "template": {"image": "stub", "command": ["stub"]},  # nothing runs: stubpods
            "topology": {"subTopologies": [{"id": 0, "sourceTopics": [INPUT], "stores": [STORE]}]},
        },
    }


@dataclass
class Usage:
    cpu: float  # % of one core
    rss: float  # MiB, at the end
    requests: float  # per second
    machine: float  # % of all cores busy
    stub_cpu: float  # % of one core: the stub pods (bench.fleet.stubpods), for context


class Meter:
    """CPU, memory and API requests of the operator over a window."""

    def __init__(self, api: Any, pid: int, stub: int) -> None:
        self.api, self.pid, self.stub = api, pid, stub
        self.t = time.monotonic()
        self.ticks = cpu_ticks(pid)
        self.stub_ticks = cpu_ticks(stub)
        self.requests = operator_requests(api)
        self.machine = machine_busy()

    def read(self) -> Usage:
        seconds = time.monotonic() - self.t
        busy, total = machine_busy()
        return Usage(
            cpu=cpu_percent(self.ticks, cpu_ticks(self.pid), seconds, HZ),
            rss=rss_mib(self.pid),
            requests=rate(self.requests, operator_requests(self.api), seconds),
            machine=100.0 * (busy - self.machine[0]) / max(1, total - self.machine[1]),
            stub_cpu=cpu_percent(self.stub_ticks, cpu_ticks(self.stub), seconds, HZ),
        )


def wait_balanced(view: FleetView, apps: list[str], timeout: float) -> float:
    start = time.monotonic()
    last = 0.0
    while True:
        done = sum(view.balanced(a) for a in apps)
        if done == len(apps):
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{done}/{len(apps)} apps balanced after {timeout:.0f}s")
        if time.monotonic() - last > 10:
            last = time.monotonic()
            progress(f"  {done}/{len(apps)} apps balanced")
        time.sleep(0.5)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fleet.run",
        description="One operator for a fleet: its CPU, memory, API requests/s and "
        "scale -> published generation latency at growing numbers of StreamApps "
        "(stub pods; docs/benchmarks.md, 'One operator for a fleet').",
    )
    parser.add_argument("--sizes", default="10,100,500", help="fleet sizes, comma separated")
    parser.add_argument("--samples", type=int, default=100, help="scales timed per size")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between scales")
    parser.add_argument("--window", type=float, default=30.0, help="seconds of settled usage")
    parser.add_argument("--timeout", type=float, default=60.0, help="per scale, seconds")
    parser.add_argument("--settle-timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--workdir", type=Path, help="keep the logs here")
    return parser.parse_args(argv)


@dataclass
class Bench:
    api: Any
    custom: Any
    view: FleetView
    bootstrap: str
    pid: int  # the operator's
    stub: int  # the stub pods' process
    made: int = 0  # apps created so far


def measure(bench: Bench, size: int, args: argparse.Namespace) -> dict[str, Any]:
    """Grow the fleet to ``size`` apps, wait for it to settle, measure."""
    progress(f"{size} apps: creating topics and apps {bench.made}..{size - 1}")
    changelogs = [f"fleet-{i:04d}-{STORE}-changelog" for i in range(bench.made, size)]
    create_topics(bench.bootstrap, changelogs, TASKS)
    for i in range(bench.made, size):
        bench.custom.create_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, PLURAL, manifest(i, bench.bootstrap)
        )
    bench.made = size
    apps = [app_name(i) for i in range(size)]
    took = wait_balanced(bench.view, apps, args.settle_timeout)
    progress(f"{size} apps balanced ({took:.0f}s); {args.window:.0f}s settled")
    time.sleep(5)
    meter = Meter(bench.api, bench.pid, bench.stub)
    time.sleep(args.window)
    idle = meter.read()
    progress(f"  settled: {asdict(idle)}")
    meter = Meter(bench.api, bench.pid, bench.stub)
    samples = scale_trials(
        bench.view, bench.custom, NAMESPACE, apps, pods=PODS, samples=args.samples,
        every=args.every, timeout=args.timeout, say=progress,
    )  # fmt: skip
    busy = meter.read()
    result = summary(samples)
    progress(f"  scaling: {asdict(busy)}; latency {json.dumps(result)}")
    return {
        "apps": size,
        "pods": size * PODS,
        "balanced_after": took,
        "settled": asdict(idle),
        "scaling": asdict(busy),
        "latency": result,
        "samples": [asdict(s) for s in samples],
    }


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    # Stop cleanly (the stack, the operator, the stubs) on SIGTERM, and on SIGINT even
    # when started in the background (where a shell leaves SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = args.workdir or Path(f"/tmp/segue-fleet-{int(time.time())}")
    workdir.mkdir(parents=True, exist_ok=True)
    progress(f"logs in {workdir}")
    from kubernetes import client

    rows: list[dict[str, Any]] = []
    with fleet_stack() as (stack, api):
        kube, kafka = stack.kube, stack.kafka
        assert kube is not None
        assert kafka is not None
        new_namespace(api, NAMESPACE)
        kubeconfig = operator_identity(api, kube.server, kube.ca_file, workdir / "op.kubeconfig")
        create_topics(kafka.bootstrap_servers, [INPUT], TASKS)
        python = sys.executable
        stub = ManagedProcess(
            "stubpods",
            [
                python,
                "-m",
                "bench.fleet.stubpods",
                "--kubeconfig",
                str(kube.kubeconfig),
                "--namespace",
                NAMESPACE,
                "--store",
                STORE,
            ],
            workdir / "stubpods.log",
        )
        operator = ManagedProcess(
            "operator",  # its defaults (operator/settings.py), cluster-wide
            [
                python,
                "-m",
                "segue",
                "operator",
                "--kubeconfig",
                str(kubeconfig),
                "--metrics-port",
                str(free_port()),
            ],
            workdir / "operator.log",
        )
        view = FleetView(api, NAMESPACE)
        view.start()
        try:
            stub.start()
            operator.start()
            assert operator.proc is not None
            assert stub.proc is not None
            custom = client.CustomObjectsApi(api)
            pids = operator.proc.pid, stub.proc.pid
            bench = Bench(api, custom, view, kafka.bootstrap_servers, *pids)
            for size in (int(s) for s in args.sizes.split(",")):
                rows.append(measure(bench, size, args))
                if args.out:
                    args.out.write_text(json.dumps(rows, indent=1))
        finally:
            operator.stop()
            stub.stop()
    print(table(rows))


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| apps (pods) | operator CPU %: settled / scaling | RSS MiB | API requests/s: "
        "settled / scaling | scale -> generation p50 / p99 s (n) | up p50 / p99 | down p50 / p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, b, lat = r["settled"], r["scaling"], r["latency"]
        lines.append(
            f"| {r['apps']} ({r['pods']}) | {s['cpu']:.0f} / {b['cpu']:.0f} | {b['rss']:.0f} | "
            f"{s['requests']:.1f} / {b['requests']:.1f} | {lat['p50']:.2f} / {lat['p99']:.2f} "
            f"({lat['samples']}, {lat['timeouts']} timed out) | "
            f"{lat['up']['p50']:.2f} / {lat['up']['p99']:.2f} | "
            f"{lat['down']['p50']:.2f} / {lat['down']['p99']:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
