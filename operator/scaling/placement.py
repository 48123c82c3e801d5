"""From an observation to an assignor request, and from its decision to the next generation.

The assignor (``segue.assignor``) owns every placement choice; this module only
translates. Lags follow docs/protocol.md: the operator's own reading of each changelog's
last stable offset minus the offset a member reports for its copy (restored, or
checkpointed on local disk), so a member that is slow to report looks behind, never
ahead. Members named in the last generation but missing from ``members`` are gone, and
the assignor hands their tasks at once to the most caught-up member. Which of the
assignor's moves wait a generation or more is :mod:`.promotion`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from segue.assignor import (
    AssignmentConfig,
    AssignRequest,
    Decision,
    assign,
    pick_leaving,
)
from segue.protocol.tasks import TaskId

from .inventory import Inventory
from .model import PodObs, Policy, Published, Roles, World
from .promotion import held_back


def lags(world: World, inventory: Inventory, members: Iterable[str]) -> dict[str, dict[str, int]]:
    """member -> task -> changelog records behind, for the stateful copies it holds."""
    out: dict[str, dict[str, int]] = {}
    ends = inventory.ends
    for m in members:
        if m not in inventory.lags:  # memo: one look asks for the same members' lags again
            pod = world.pods.get(m)
            if pod is None or not pod.reporting:
                continue
            mine: dict[str, int] = {}
            for task, held in pod.offsets.items():
                of = ends[task] if task in ends else _ends(world, inventory, task)
                if of is None:
                    continue
                behind = 0
                for store, end in of:
                    at = held.get(store, 0)
                    if end > at:
                        behind += end - at
                mine[task] = behind
            inventory.lags[m] = mine
        if inventory.lags[m]:
            out[m] = dict(inventory.lags[m])
    return out


def _ends(world: World, inventory: Inventory, task: str) -> tuple[tuple[str, int], ...] | None:
    """Each store's changelog end of a stateful task in the inventory, else None."""
    if task in inventory.ends:  # memo: a look asks once per copy
        return inventory.ends[task]
    stores = inventory.stores.get(task)
    if not stores or not inventory.tasks.get(task):
        found = None
    else:
        partition = TaskId.parse(task).partition
        found = tuple((s, world.end_offsets.get((c, partition), 0)) for s, c in stores)
    inventory.ends[task] = found
    return found


def task_lag(world: World, inventory: Inventory, task: str, held: Mapping[str, int]) -> int | None:
    """Changelog records a copy holding store offsets ``held`` is behind (``{}``: a copy
    restoring from nothing); None for a stateless task or one not in the inventory."""
    of = _ends(world, inventory, task)
    return None if of is None else sum(max(0, e - held.get(s, 0)) for s, e in of)


def state_sizes(
    pods: Mapping[str, PodObs], tasks: Iterable[str], published: Published | None = None
) -> dict[str, int]:
    """A task's size, what moving it costs: the changelog bytes its copies report (what a
    restore from nothing reads), else their disk usage. Disk usage is a poor ruler: a
    store's fixed files and compaction state move it by more than small tasks differ, so
    the assignor moved a task a few changelog records larger than needed (calibration
    run, docs/pipeline.md). Of the copies, the active owner's counts, else the largest:
    a learner's must not set it, a half-restored store can report more than the whole,
    and the learner would then be switched to a neighbour and its work thrown away."""
    logical = _sizes(pods, published, lambda pod: pod.changelog_bytes)
    disk = _sizes(pods, published, lambda pod: pod.state_bytes)
    return {
        t: logical[t] if logical.get(t) else disk.get(t, 0)
        for t in tasks
        if t in logical or t in disk
    }


def _sizes(
    pods: Mapping[str, PodObs],
    published: Published | None,
    measure: Callable[[PodObs], Mapping[str, int]],
) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for pod in pods.values():
        for t, size in measure(pod).items():
            sizes[t] = max(size, sizes.get(t, 0))
    for member, roles in published.members.items() if published else ():
        owner = pods.get(member)
        held = measure(owner) if owner is not None else {}
        sizes.update({t: held[t] for t in roles.active if t in held})
    return sizes


def build_request(
    world: World,
    inventory: Inventory,
    members: list[str],
    leaving: set[str],
    published: Published | None,
) -> AssignRequest:
    """The request as plain data, checked by pydantic in one call rather than a model
    per task: the simulator builds one per look (docs/pipeline.md, "The fast path")."""
    sizes = state_sizes(world.pods, inventory.tasks, published)
    known = inventory.tasks
    tasks = []
    for t, stateful in known.items():
        of = _ends(world, inventory, t)
        tasks.append(
            {
                "id": t,
                "stateful": stateful,
                "state_bytes": sizes.get(t),
                "changelog_records": None if of is None else sum(e for _, e in of if e > 0),
            }
        )
    current = {
        m: {
            "active": [t for t in r.active if t in known],
            "standby": [t for t in r.standby if t in known],
            "learning": [t for t in r.learning if t in known],
        }
        for m, r in (published.members.items() if published else ())
    }
    return AssignRequest.model_validate(
        {
            "tasks": tasks,
            "members": [{"id": m, "leaving": m in leaving} for m in members],
            "current": current,
            "lags": lags(world, inventory, members),
            "config": config(world.policy),
        }
    )


def config(policy: Policy) -> AssignmentConfig:
    return AssignmentConfig(
        num_standby_replicas=policy.num_standby_replicas,
        acceptable_recovery_lag=policy.acceptable_recovery_lag,
        max_warmup_replicas=policy.max_warmup_replicas,
        balance_tolerance=policy.balance_tolerance,
    )


def cheapest_to_remove(request: AssignRequest, count: int) -> list[str]:
    return pick_leaving(request, count) if count else []


def place(
    request: AssignRequest,
    policy: Policy,
    stalled: Mapping[str, Iterable[str]],
    arriving: Iterable[str] = (),
) -> tuple[dict[str, Roles], Decision]:
    """``stalled``: per member, the tasks it reports it cannot run (they restore nothing);
    ``arriving``: the members a published handover has not reached yet."""
    decision = assign(request)
    placed = {
        m: Roles(tuple(a.active), tuple(a.standby), tuple(a.learning))
        for m, a in decision.assignment.items()
    }
    target = {m: t.active for m, t in decision.target.items()}
    return held_back(placed, request, policy, stalled, target, arriving=arriving), decision
