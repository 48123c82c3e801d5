"""Handover pause, p50/p99: the Tally app on two worker processes, a steady
producer, and every active task moved from one worker to the other ``rounds``
times, each time to a learner that has caught up (``tests/worker/scenarios.py``,
the same scenario the integration test runs with fewer rounds). The pause of a
task is the time from the last record its old owner committed to the first
record its new owner committed; the committed output is checked to be exact.

    .venv/bin/python -m bench.worker.handover [--rounds 20] [--fence-delay-ms 50]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.worker.stack import local_stack
from tests.worker.scenarios import handover


def main(rounds: int, partitions: int, rate: float, extra: list[str]) -> str:
    from kubernetes import client, config

    with local_stack(kube=True) as (broker, plane), tempfile.TemporaryDirectory() as tmp:
        api = config.new_client_from_config(config_file=str(plane.kubeconfig))
        client.CoreV1Api(api).create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name="bench"))
        )
        result = handover(
            bootstrap=broker.bootstrap_servers,
            kube_api=api,
            kubeconfig=plane.kubeconfig,
            namespace="bench",
            workdir=Path(tmp),
            rounds=rounds,
            partitions=partitions,
            rate=rate,
            extra=extra,
        )
        api.close()
    return (
        f"{rounds} handovers of {partitions} tasks at {rate:.0f} records/s "
        f"({' '.join(extra) or 'default settings'}), output exact: {result.summary()}"
    )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--fence-delay-ms", type=int)
    args = parser.parse_args()
    extra = [] if args.fence_delay_ms is None else ["--fence-delay-ms", str(args.fence_delay_ms)]
    print(main(args.rounds, args.partitions, args.rate, extra))


if __name__ == "__main__":
    cli()
