"""All worker benchmarks, one after the other, as Markdown for docs/benchmarks.md.

    .venv/bin/python -m bench.worker.run_all

Takes about five minutes on the 2-core machine: a worker's start (~40 s), store engines (~1 min),
restoration of a 1,000,000-record changelog (~2 min), 20 handovers (~2 min).
"""

from __future__ import annotations

from bench.worker import handover, restore, resume, start, store_engines
from bench.worker.stack import local_stack


def main() -> None:
    print("### Worker start\n")
    print(start.main(runs=15), flush=True)
    print("\n### Store engines\n")
    print(store_engines.main(), flush=True)
    print("\n### Restoration\n")
    with local_stack(kube=False) as (broker, _):
        print(restore.main(broker.bootstrap_servers, 1_000_000, 200_000, 100, 10_000), flush=True)
        print("\n### Resuming a paused changelog\n")
        print(resume.main(broker.bootstrap_servers, rounds=10, pause=0.2), flush=True)
    print("\n### Handover pause\n")
    print(handover.main(rounds=20, partitions=4, rate=1000.0, extra=[]), flush=True)


if __name__ == "__main__":
    main()
