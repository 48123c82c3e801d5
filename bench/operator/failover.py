"""Operator failover: how long an app goes without an acting operator when the leader
dies (SIGKILL: the lease must be waited out) against when it is stopped cleanly
(SIGTERM, as a rollout or a drained node does: the lease is released), side by side
in one run, with the chart's default lease timings (15 s / 10 s / 2 s).

Two ``segue operator --leader-elect`` processes share one Lease on the local stack's
API server. Each round stops the current leader and times until the other one holds
the lease and reports itself acting (``segue_operator_leader 1``); the stopped one is
started again as the new standby.

    .venv/bin/python -m bench.operator.failover [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from segue.stack.localstack import LocalStack
from tests.operator.e2e import OperatorProcess

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "default"
LEASE = ("--lease-duration=15", "--renew-deadline=10", "--retry-period=2")


def holder(api: Any) -> str | None:
    from kubernetes import client

    try:
        lease = client.CoordinationV1Api(api).read_namespaced_lease("segue-operator", NAMESPACE)
    except client.ApiException:
        return None
    return lease.spec.holder_identity


def acting(proc: OperatorProcess) -> bool:
    try:
        return "segue_operator_leader 1.0" in proc.metrics()
    except OSError:
        return False


def until(check: Any, timeout: float = 120.0) -> float:
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise TimeoutError("no failover within the timeout")
        time.sleep(0.05)
    return time.monotonic() - start


def standing_by(proc: OperatorProcess) -> bool:
    try:
        return "segue_operator_leader 0.0" in proc.metrics()
    except OSError:
        return False


def one_round(api: Any, procs: dict[str, OperatorProcess], how: str) -> float:
    until(lambda: holder(api) in procs)
    leader = str(holder(api))
    standby = next(name for name in procs if name != leader)
    until(lambda: standing_by(procs[standby]))
    time.sleep(3)  # mid-lease, as a crash would be
    if how == "SIGKILL":
        procs[leader].kill()
    else:
        procs[leader].stop()
    took = until(lambda: holder(api) == standby and acting(procs[standby]))
    procs[leader].start()
    print(f"{how}: {standby} acting {took:.2f}s after {leader} stopped", flush=True)
    return took


def main(args: argparse.Namespace) -> str:
    from kubernetes import config, utils

    with (
        LocalStack(with_kafka=False, with_pods=False) as stack,
        tempfile.TemporaryDirectory() as tmp,
    ):
        assert stack.kube is not None
        api = config.new_client_from_config(config_file=str(stack.kube.kubeconfig))
        utils.create_from_yaml(api, str(ROOT / "crds" / "streamapp.yaml"))
        procs = {
            name: OperatorProcess(
                stack.kube.kubeconfig, NAMESPACE, Path(tmp), "--leader-elect",
                f"--lease-namespace={NAMESPACE}", f"--identity={name}", *LEASE, name=name,
            ).start()
            for name in ("a", "b")
        }  # fmt: skip
        try:
            rows = []
            for how in ("SIGKILL", "SIGTERM"):
                took = [one_round(api, procs, how) for _ in range(args.rounds)]
                rows.append(
                    f"| {how} | {len(took)} | {statistics.median(took):.2f} | "
                    f"{min(took):.2f} | {max(took):.2f} |"
                )
        finally:
            for proc in procs.values():
                proc.stop()
            api.close()
    return (
        "Leader lost -> the standby acting (lease 15 s, renew deadline 10 s, retry 2 s).\n\n"
        "| leader stopped by | rounds | median s | min s | max s |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
    )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    print(main(parser.parse_args()))


if __name__ == "__main__":
    cli()
