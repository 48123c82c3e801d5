"""Autoscaling signals in a closed loop with the HPA's algorithm, side by side in one
seeded run: settle time, peak replicas, reversals and generations after an input step.

Each signal drives the same simulated app (tests/autoscale/sim.py: learners that add
nothing for ``warmup`` seconds, then take over) through the same HPA algorithm
(tests/autoscale/hpa.py, defaults: 15 s sync, 10 % tolerance, 300 s scale-down
stabilization, scale-up by max(100 %, 4 pods) per 15 s), min 2, max 12 replicas:

- ``segue``: ``segue_app_replicas_needed``, AverageValue 1 (docs/autoscaling.md);
- ``records-lag``: the input lag, AverageValue ``lagThreshold`` per replica, which is
  what KEDA's Kafka scaler gives the HPA;
- ``per-pod``: Segue's maths with capacity per pod instead of per active member (no
  anti-thrash: learners look like pods that do not help);
- ``projected-s``: ``segue_app_projected_seconds_to_catch_up`` as a Value target
  (``+Inf`` clamped to 3600), to show why seconds are a dashboard, not a target.

    .venv/bin/python -m bench.autoscale.signal [--warmup 30] [--seeds 5] [--lag-threshold 1000]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

from segue.operator.autoscale import AppSignal
from tests.autoscale.hpa import HPA
from tests.autoscale.sim import Scenario, run


def per_pod(s: AppSignal) -> float:
    per = s.processing_rate / s.replicas
    return (s.input_rate + s.lag_records / 300.0) / per if per else float(s.replicas)


def signals(
    lag_threshold: float,
) -> dict[str, tuple[Callable[[AppSignal], float], Callable[[], HPA]]]:
    return {
        "segue": (lambda s: s.replicas_needed, lambda: HPA(1.0, "AverageValue", 2, 12)),
        "records-lag": (
            lambda s: float(s.lag_records),
            lambda: HPA(lag_threshold, "AverageValue", 2, 12),
        ),
        "per-pod": (per_pod, lambda: HPA(1.0, "AverageValue", 2, 12)),
        "projected-s": (
            lambda s: min(s.projected_seconds_to_catch_up, 3600.0),
            lambda: HPA(60.0, "Value", 2, 12),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--lag-threshold", type=float, default=1000.0)
    args = parser.parse_args()
    base = Scenario(warmup=args.warmup)
    print(
        f"input {base.before:.0f} -> {base.after:.0f} records/s at t={base.step_at:.0f}s, "
        f"{base.capacity:.0f}/s per member, learners warm up {args.warmup:.0f}s, "
        f"{base.duration:.0f}s simulated, seeds 0..{args.seeds - 1}: N = {base.needed}"
    )
    print("| signal | peak replicas | final | settle s (median) | reversals | generations |")
    print("|---|---|---|---|---|---|")
    for name, (metric, hpa) in signals(args.lag_threshold).items():
        traces = [
            run(Scenario(warmup=args.warmup, seed=k), metric, hpa()) for k in range(args.seeds)
        ]
        settle = statistics.median(t.settle_time(base.step_at) for t in traces)
        print(
            f"| {name} | {max(t.peak for t in traces)} | "
            f"{'/'.join(str(t.final) for t in traces)} | {settle:.0f} | "
            f"{max(t.reversals for t in traces)} | {max(t.generations for t in traces)} |"
        )


if __name__ == "__main__":
    main()
