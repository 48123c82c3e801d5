"""Handovers in flight: a task published to a new owner and not yet running there.

A handover is done once the new owner *runs* the task (:meth:`~.model.PodObs.runs`):
holding it active is not enough, as a worker reports the role while it still waits to
fence the previous owner or restores the store's tail, and processes nothing. The time
from publishing to then is the handover duration the operator measures
(``segue_operator_handover_duration_seconds``). Kept in :class:`~.model.Memory`, so a
restarted operator still finishes the measurement.
"""

from __future__ import annotations

from segue.assignor.ids import parse_task_id

from .model import Handover, Published, World

ARRIVAL_BOUND = 10.0  # seconds a handover not running yet holds standbys back (.promotion)


def track_handovers(
    world: World, publish: Published | None, in_force: Published | None
) -> tuple[dict[str, Handover], list[tuple[str, float]], list[tuple[str, str, str]]]:
    owners = {t: m for m, r in (in_force.members.items() if in_force else ()) for t in r.active}
    pending: dict[str, Handover] = {}
    done: list[tuple[str, float]] = []
    for task, h in world.memory.handovers.items():
        pod = world.pods.get(h.to)
        if owners.get(task) != h.to or pod is None:
            continue  # superseded, or its new owner is gone
        if _running(world, task, h):
            done.append((task, max(0.0, world.now - h.since)))
        else:
            pending[task] = h
    moved: list[tuple[str, str, str]] = []
    if publish is not None and world.published is not None:
        before = {t: m for m, r in world.published.members.items() for t in r.active}
        for m, r in publish.members.items():
            for t in r.active:
                if before.get(t) not in (None, m):
                    moved.append((t, before[t], m))
                    pending[t] = Handover(m, world.now)
    return pending, done, sorted(moved, key=lambda x: parse_task_id(x[0]))


def arriving(world: World) -> set[str]:
    """The members a published handover has not reached yet: not running the task. One
    not running after :data:`ARRIVAL_BOUND` holds nothing back any longer."""
    return {
        h.to
        for t, h in world.memory.handovers.items()
        if not _running(world, t, h) and world.now - h.since < ARRIVAL_BOUND
    }


def _running(world: World, task: str, handover: Handover) -> bool:
    pod = world.pods.get(handover.to)
    return pod is not None and pod.runs(task)
