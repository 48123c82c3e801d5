"""Rolling a template change through the pods, ``maxUnavailable`` at a time, through learners.

A pod whose template-hash label differs from the spec's is *outdated*. While nothing else
is in flight (no pod joining, leaving or away, no handover pending), the machine picks
outdated members, highest ordinal first as a StatefulSet rolls, up to
``spec.rollout.maxUnavailable``: they are *rolling*. The assignor treats a rolling member
as leaving (:mod:`.core` passes it in the leaving set): its active tasks are warmed up
elsewhere, standbys first, and handed over; nothing new lands on it. Once the generation
in force gives it no active task and its pod has applied that generation, the pod is
deleted (its claim is kept) and the roster recreates it under its name from the new
template, as it does for any member without a pod. When the new pod reports, the member
stops rolling and the assignor balances tasks back onto it; its claim holds their state,
so its learners replay only the tail. The app pauses only for handovers, never for a
restart plus a restore.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from segue.assignor.ids import member_sort_key

from .model import Event, PodObs, Published, Roles, World


@dataclass(frozen=True)
class Rollout:
    rolling: Mapping[str, float]  # members rolling now -> since
    outdated: tuple[str, ...]  # members whose pod is built from an older template
    updated: int  # pods (not terminating) built from the current template
    events: tuple[Event, ...]
    in_place: bool = False  # a lone pod: nobody to hand over to, it restarts with its tasks


def current(world: World, pod: PodObs) -> bool:
    return (
        not world.template_hash
        or not pod.template_hash
        or (pod.template_hash == world.template_hash)
    )


def plan_rollout(world: World, members: list[str], quiet: bool) -> Rollout:
    """Who rolls now; ``quiet``: no scale action or handover in flight, so one may start."""
    pods = world.pods
    live = {n: p for n, p in pods.items() if not p.terminating}
    outdated = tuple(
        sorted(
            (m for m in members if m in live and not current(world, live[m])),
            key=member_sort_key,
        )
    )
    rolling: dict[str, float] = {}
    for m, since in world.memory.rolling.items():
        pod = pods.get(m)
        back = pod is not None and current(world, pod) and pod.running and pod.reporting
        if m in members and not back:
            rolling[m] = since
    events: list[Event] = []
    in_place = len(members) == 1
    if quiet and world.replicas > 0:
        # at least one member stays to take the tasks over, unless there is only one
        limit = 1 if in_place else min(world.policy.max_unavailable, len(members) - 1)
        room = limit - len(rolling)
        picked = [m for m in reversed(outdated) if m not in rolling][: max(room, 0)]
        for m in picked:
            rolling[m] = world.now
        if picked and in_place:
            events.append(
                Event(
                    "Normal",
                    "RollingUpdate",
                    f"{picked[0]} restarts in place onto template {world.template_hash}, "
                    "keeping its tasks and claim: with one pod there is nobody to hand them "
                    "to, so the app pauses for the restart (run two pods to avoid it)",
                )
            )
        elif picked:
            events.append(
                Event(
                    "Normal",
                    "RollingUpdate",
                    f"{', '.join(picked)} hand over their active tasks, then restart onto "
                    f"template {world.template_hash} ({len(outdated)} of {len(members)} "
                    "pods outdated)",
                )
            )
    if world.memory.rolling and not rolling and not outdated:
        events.append(
            Event("Normal", "RolloutComplete", f"every pod runs template {world.template_hash}")
        )
    updated = sum(1 for p in live.values() if current(world, p))
    return Rollout(rolling, outdated, updated, tuple(events), in_place)


def restart_events(world: World, rollout: Rollout, restart: list[str]) -> list[Event]:
    """Say what each restart is: after a handover, or in place with its tasks."""
    how = (
        "restarts in place with its tasks (no other pod to hand them to)"
        if rollout.in_place
        else "handed its tasks over and restarts"
    )
    return [
        Event("Normal", "PodRestarting", f"{m} {how} onto template {world.template_hash}")
        for m in restart
    ]


def handing_over(rollout: Rollout) -> set[str]:
    """The members the assignor must treat as leaving (none when a lone pod restarts)."""
    return set() if rollout.in_place else set(rollout.rolling)


def restarts(world: World, rollout: Rollout, placed: Mapping[str, Roles] | None) -> list[str]:
    """Rolling members whose pods can go now: no active task in the generation in force
    nor in the one just placed, and that generation applied (or the pod is not running it
    at all, which holds nothing either). A lone pod goes at once, with its tasks."""
    published: Published | None = world.published
    out = []
    for m in sorted(rollout.rolling, key=member_sort_key):
        pod = world.pods.get(m)
        if pod is None or pod.terminating or current(world, pod):
            continue
        if rollout.in_place:
            out.append(m)
            continue
        if placed is not None and placed.get(m, Roles()).active:
            continue
        held = published.members.get(m, Roles()) if published else Roles()
        applied = (
            published is None
            or not pod.reporting
            or ((pod.generation or 0) >= published.generation)
        )
        if not held.active and applied:
            out.append(m)
    return out
