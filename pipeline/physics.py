"""One tick of simulated time: pods start, copies restore, actives process input.

The model (docs/pipeline.md, "The simulator"): a pod runs ``startup_delay`` seconds
after it is created. A running pod applies the newest generation at the end of the tick
in which it was published, so a task handed over is unavailable for that one tick (the
handover instant) and longer if its new owner must still restore. Every copy a pod
holds (active not yet current, standby, learner) restores ``restore_rate`` changelog
records/s. An active processes input only when its store is at the changelog end; a
pod's ``pod_rate`` is shared among its processing tasks (water-filling), and what it
cannot process waits in the task's backlog. Records that wait past the tick they
arrived in are *late*. Every processed record appends ``changelog_ratio`` records to the
task's changelog, which its standbys and learners must then follow.
"""

from __future__ import annotations

from .metrics import Meter
from .state import Cluster, Pod

# A pod whose demands sum to under this share of its rate serves each in full: water-
# filling would give each its demand but for float rounding when they fill it exactly.
ROOM = 1.0 - 1e-9


def advance(c: Cluster, now: float, tick: float, rate: float, meter: Meter) -> None:
    """Move ``c`` from ``now`` to ``now + tick``; ``rate``: records/s per initial partition."""
    held = c.published.members if c.published else {}
    up = {n: p for n, p in c.pods.items() if now >= p.up_at}  # p.up(now)
    c.restoring = {}
    running = c.running
    for name, pod in up.items():
        roles = held.get(name)
        if roles is None or pod.applied != (c.published.generation if c.published else 0):
            continue
        for t in roles.tasks():
            task = c.tasks.get(t)
            if task is None or not task.stateful:
                continue
            behind = task.end - pod.restored.get(t, 0.0)  # c.lag(pod, t), inlined
            lag = behind if behind > 0.0 else 0.0
            if running.get(t) == name and lag < 1e-9:
                continue  # a current active: it processes, it does not restore
            gained = min(lag, task.restore_rate * tick)
            if gained > 0:
                pod.restored[t] = pod.restored.get(t, 0.0) + gained
                c.restoring[(name, t)] = gained / tick
                meter.restored(gained * task.record_bytes)
    serving = {t: p for t, p in running.items() if p in up and _current(c, up[p], t)}
    inflow = c.inflow(rate)
    share = capacity(c, serving, tick, inflow)
    for t, task in c.tasks.items():
        arrived = inflow[t] * tick
        cap = share.get(t, 0.0)
        processed = min(cap, task.backlog + arrived)
        meter.processed(processed, late=min(processed, task.backlog))
        task.backlog += arrived - processed
        if processed and task.stateful and task.changelog_ratio:
            task.end += processed * task.changelog_ratio
            c.pods[serving[t]].restored[t] = task.end
    meter.tick(tick, unavailable=len(c.tasks) - len(serving), pods=len(c.pods))
    _apply(c, now + tick)


def _current(c: Cluster, pod: Pod, task: str) -> bool:
    return not c.tasks[task].stateful or c.lag(pod, task) < 1e-9


def capacity(
    c: Cluster, serving: dict[str, str], tick: float, inflow: dict[str, float]
) -> dict[str, float]:
    """Each pod's ``pod_rate * tick`` split over its serving tasks by water-filling demand."""
    by_pod: dict[str, list[str]] = {}
    for t, p in serving.items():
        by_pod.setdefault(p, []).append(t)
    out: dict[str, float] = {}
    tasks = c.tasks
    full = c.pod_rate * tick
    for ts in by_pod.values():
        demand = {t: tasks[t].backlog + inflow[t] * tick for t in ts}
        if sum(demand.values()) <= full * ROOM:
            out.update(demand)  # room for every demand: what water-filling gives, unsorted
            continue
        left = full
        ts.sort(key=demand.__getitem__)
        n = len(ts)
        for i, t in enumerate(ts):
            give = min(demand[t], left / (n - i))
            out[t] = give
            left -= give
    return out


def _apply(c: Cluster, now: float) -> None:
    """Running pods take up the generation in force; their new actives start."""
    if c.published is None:
        return
    gen = c.published.generation
    for name, pod in c.pods.items():
        if not pod.up(now - 1e-9) or pod.applied == gen:
            continue
        pod.applied = gen
        roles = c.published.members.get(name)
        for t in roles.active if roles else ():
            if t in c.tasks and t not in c.running:
                c.running[t] = name
