"""The assignor benchmark: Segue vs Kafka Streams' HighAvailabilityTaskAssignor, same inputs.

For each case of :mod:`scenarios` it reports, for both assignors: tasks moved to reach
balance (against the exact optimum Segue's target proves), rounds (assignments computed until
the group runs the balanced target, every warmup/learner caught up by the next round), the
peak number of stateful actives on one member during the transition, and plan time (the first
decision, in process, median of repeats; Java after JIT warm-up). Segue's CLI wall time
(process start to exit, JSON in and out) is measured on the large cases.

    python -m bench.assignor.run [--quick] [--markdown FILE]

Run from the repository root with the project's venv; bench/assignor/run.sh builds the Java
harness first (Maven, Kafka 4.3.1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from segue.assignor import AssignRequest, Decision, assign, replay
from segue.assignor.replay import assign_dict, at_target

from .scenarios import CASES, Case

HERE = Path(__file__).resolve().parent
JAVA = HERE / "java"


def next_request(request: dict[str, Any], decision: Decision) -> dict[str, Any]:
    return replay.next_request(request, decision, drop_departed=True)


def segue_case(case: Case, repeats: int) -> dict[str, Any]:
    request = case.request()
    stateful = set(case.stateful_ids())
    model = AssignRequest.model_validate(request)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        assign(model)
        times.append(time.perf_counter() - start)
    initial = {t: m for m, h in request["current"].items() for t in h["active"]}
    peak = max(
        (sum(1 for t in ts["active"] if t in stateful) for ts in request["current"].values()),
        default=0,
    )
    first: Decision | None = None
    rounds = 0
    while True:
        decision = assign_dict(request)
        first = first or decision
        rounds += 1
        peak = max(
            peak, *(sum(1 for t in h.active if t in stateful) for h in decision.assignment.values())
        )
        if at_target(decision) or rounds > 10_000:
            break
        request = next_request(request, decision)
    final = {t: m for m, h in decision.target.items() for t in h.active}
    moved = sum(1 for t, m in initial.items() if final.get(t) != m)
    return {
        "optimum": first.stats.moves,
        "moved": moved,
        "rounds": rounds,
        "peak": peak,
        "plan_ms": statistics.median(times) * 1000,
    }


def kafka_case(
    case: Case, repeats: int, max_rounds: int, budget: float, timeout: float
) -> dict[str, Any]:
    lines = [
        f"config 0 {case.max_warmup_replicas} {case.num_standby_replicas} {repeats} "
        f"{max_rounds} {budget}"
    ]
    stateful = set(case.stateful_ids())
    for t in case.task_ids():
        sub, part = t.split("_")
        lines.append(f"task {sub} {part} {int(t in stateful)}")
    staying = [m for m in case.after if m not in case.leaving]  # Kafka has no "leaving"
    lines += [f"client {m}" for m in staying]
    for m, ts in case.settled().items():
        if m in staying and ts:
            lines.append(f"active {m} {' '.join(ts)}")
    classpath = f"{JAVA / 'target' / 'classes'}:{(JAVA / 'target' / 'classpath.txt').read_text()}"
    try:
        out = subprocess.run(
            ["java", "-Xmx8g", "-cp", classpath, "segue.bench.KafkaAssignorHarness"],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        ).stdout
    except subprocess.CalledProcessError as error:
        lines = error.stderr.strip().splitlines() or ["?"]
        reason = next((x for x in lines if "Error" in x or "Exception" in x), lines[-1])[:80]
        return {
            "plan_ms": f"failed: {reason}",
            "rounds": "?",
            "converged": "false",
            "moved": "?",
            "peak": "?",
        }
    except subprocess.TimeoutExpired:
        return {
            "plan_ms": float("nan"),
            "rounds": "?",
            "converged": "false",
            "moved": "?",
            "peak": "?",
            "timed_out": timeout,
        }
    result: dict[str, Any] = {}
    final: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        if key == "final":
            member, *tasks = value.split()
            final.update(dict.fromkeys(tasks, member))
        else:
            result[key] = float(value) if key == "plan_ms" else value
    # moved as for Segue: tasks whose final owner is not their first (gone owners included)
    initial = {t: m for m, ts in case.settled().items() for t in ts}
    result["moved"] = sum(1 for t, m in initial.items() if final.get(t) != m)
    return result


def cli_wall_ms(case: Case, repeats: int) -> float:
    segue = Path(sys.executable).with_name("segue")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(case.request(), handle)
    times = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(
                [str(segue), "assign", handle.name], check=True, stdout=subprocess.DEVNULL
            )
            times.append(time.perf_counter() - start)
    finally:
        os.unlink(handle.name)
    return statistics.median(times) * 1000


def _ms(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the two largest cases")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-rounds", type=int, default=400, help="Kafka probing rounds cap")
    parser.add_argument(
        "--budget",
        type=float,
        default=120.0,
        help="seconds Kafka's probing replay may take per case",
    )
    parser.add_argument(
        "--java-timeout",
        type=float,
        default=1800.0,
        help="seconds before the Kafka harness is given up on, per case",
    )
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    rows = []
    header = (
        "| case | optimum moves | moved: Segue / Kafka | rounds: Segue / Kafka "
        "| peak stateful actives: Segue / Kafka | plan ms: Segue / Kafka | ratio "
        "| Segue CLI wall ms |"
    )
    rows.append(header)
    rows.append("|" + "---|" * 8)
    print(header, flush=True)
    for case in CASES:
        if args.quick and case.large:
            continue
        ours = segue_case(case, args.repeats)
        theirs = kafka_case(case, args.repeats, args.max_rounds, args.budget, args.java_timeout)
        wall = f"{cli_wall_ms(case, args.repeats):.0f}" if case.large else "-"
        unfinished = theirs["converged"] != "true"
        kafka_rounds = f"{theirs['rounds']}+ (unfinished)" if unfinished else theirs["rounds"]
        kafka_moved = f"{theirs['moved']} so far" if unfinished else theirs["moved"]
        known = isinstance(theirs["plan_ms"], float)
        ratio_text = f"{ours['plan_ms'] / max(theirs['plan_ms'], 1e-9):.2f}" if known else "-"
        if "timed_out" in theirs:
            theirs["plan_ms"] = f"> {theirs['timed_out']:.0f} s"
        row = (
            f"| {case.name} (warmups {case.max_warmup_replicas}) | {ours['optimum']} "
            f"| {ours['moved']} / {kafka_moved} | {ours['rounds']} / {kafka_rounds} "
            f"| {ours['peak']} / {theirs['peak']} "
            f"| {ours['plan_ms']:.1f} / {_ms(theirs['plan_ms'])} | {ratio_text} | {wall} |"
        )
        rows.append(row)
        print(row, flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
