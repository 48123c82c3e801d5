"""Who belongs to the application: joining, member, leaving, absent (seed 002's static membership).

Pods are named ``<app>-<n>`` and a pod's name is its member id, so a pod that restarts or
is recreated keeps its tasks. This module moves names between the states:

- ``spec.replicas`` grew: cancel pending departures first (nothing is undone that need not
  be), then adopt stray pods, then create pods at the lowest free ordinals; they *join*.
- joiners are admitted to the assignment together once all of them report, or when
  ``expansionTimeoutSeconds`` has passed since the first of the batch (then the late ones
  start a new batch);
- ``spec.replicas`` shrank: drop joiners not yet admitted, then mark members *leaving*
  (absent ones first, then those whose departure moves the fewest state bytes);
- a member whose pod is away is *absent*; it keeps its tasks for
  ``registrationTimeoutSeconds``, after which it is left out of the assignment until it
  reports again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from segue.assignor.ids import member_sort_key

from .model import Event, PodObs, Published, World
from .rollout import current


@dataclass
class Roster:
    members: list[str]  # in the last generation (including leaving and absent ones)
    joining: dict[str, float]
    leaving: dict[str, float]
    absent: dict[str, float]
    admitted: list[str] = field(default_factory=list)
    create: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    deadlines: list[float] = field(default_factory=list)
    scaled: bool = False  # this step started (or turned back) a scale action
    overdue: bool = False  # no joiner ready past expansionTimeoutSeconds

    def expired(self, member: str, timeout: float, now: float) -> bool:
        since = self.absent.get(member)
        return since is not None and now - since >= timeout


def ordinal(app: str, name: str) -> int | None:
    match = re.fullmatch(re.escape(app) + r"-(0|[1-9][0-9]*)", name)
    return int(match.group(1)) if match else None


def plan_roster(
    world: World, published: Published | None, cheapest: Callable[[list[str], int], list[str]]
) -> Roster:
    """``cheapest(candidates, k)``: the k candidates whose departure moves the least state."""
    now, mem, pods = world.now, world.memory, world.pods
    members = sorted(published.members if published else (), key=member_sort_key)
    known = set(members)
    roster = Roster(
        members,
        {j: t for j, t in mem.joining.items() if j not in known},
        {m: t for m, t in mem.leaving.items() if m in known},
        {},
    )
    for m in members:
        pod = pods.get(m)
        if pod is not None and pod.running and pod.reporting and not pod.terminating:
            continue
        roster.absent[m] = mem.absent.get(m, now)
    strays = sorted(
        (
            p
            for p, pod in pods.items()
            if not pod.terminating
            and p not in known
            and p not in roster.joining
            and ordinal(world.app, p) is not None
        ),
        key=member_sort_key,
    )
    _scale(world, roster, strays, cheapest)
    _admit(world, roster)
    for name in [*(m for m in members if m not in roster.leaving), *roster.joining]:
        pod = pods.get(name)
        if pod is None:
            roster.create.append(name)
        elif (pod.failed or _stuck(world, pod)) and not pod.terminating:
            roster.delete.append(name)  # recreated at the next step, same name
    return roster


def _stuck(world: World, pod: PodObs) -> bool:
    """It cannot start (an init container fails) and is built from an older template: the
    current one may well be the fix (an operator's agent flag corrected), and it runs
    nothing to hand over first."""
    return pod.start_fault is not None and not current(world, pod)


def _scale(
    world: World, roster: Roster, strays: list[str], cheapest: Callable[[list[str], int], list[str]]
) -> None:
    now, app = world.now, world.app
    staying = [m for m in roster.members if m not in roster.leaving] + list(roster.joining)
    diff = world.replicas - len(staying)
    if diff > 0:
        held = world.published.members if world.published else {}
        back = sorted(
            roster.leaving,
            key=lambda m: (-len(held[m].active) if m in held else 0, member_sort_key(m)),
        )[:diff]
        for m in back:
            del roster.leaving[m]
        if back:
            roster.events.append(
                Event(
                    "Normal",
                    "ScaleDownCancelled",
                    f"{', '.join(back)} stay: replicas is now {world.replicas}",
                )
            )
        diff -= len(back)
        adopted = strays[:diff]
        taken = set(roster.members) | set(roster.joining) | set(world.pods)
        new: list[str] = []
        n = 0
        while len(adopted) + len(new) < diff:
            name = f"{app}-{n}"
            if name not in taken:
                new.append(name)
            n += 1
        for name in [*adopted, *new]:
            roster.joining[name] = now
        roster.scaled = bool(back or adopted or new)
        if adopted or new:
            resuming = world.published is not None and not world.published.members
            how = "resume the suspended app" if resuming else "join as learners"
            roster.events.append(
                Event(
                    "Normal",
                    "ScalingUp",
                    f"{world.replicas} replicas: {', '.join([*adopted, *new])} {how}",
                )
            )
        strays = strays[len(adopted) :]
    elif diff < 0:
        drop = sorted(roster.joining, key=member_sort_key, reverse=True)[:-diff]
        roster.scaled = True
        for name in drop:
            del roster.joining[name]
            if name in world.pods:
                roster.delete.append(name)
        need = -diff - len(drop)
        if need:
            candidates = [m for m in roster.members if m not in roster.leaving]
            away = sorted(
                (m for m in candidates if m in roster.absent),
                key=lambda m: (roster.absent[m], member_sort_key(m)),
            )[:need]
            rest = cheapest([m for m in candidates if m not in away], need - len(away))
            chosen = sorted([*away, *rest], key=member_sort_key)
            for m in chosen:
                roster.leaving[m] = now
            roster.events.append(
                Event(
                    "Normal",
                    "Suspending",
                    f"0 replicas: {', '.join(chosen)} commit and flush their tasks, then go "
                    f"(timeout {world.policy.scale_down_timeout:g}s)",
                )
                if world.replicas == 0
                else Event(
                    "Normal",
                    "ScaleDownStarted",
                    f"{world.replicas} replicas: "
                    f"{', '.join(chosen)} leave once their tasks are handed over "
                    f"(timeout {world.policy.scale_down_timeout:g}s)",
                )
            )
    roster.delete.extend(strays)


OVERDUE = "not ready within expansionTimeoutSeconds"  # in Scaling's message while so


def not_ready(pod: PodObs | None, published: Published | None) -> str | None:
    """Why a joiner cannot join yet, or None once it can. It must report *and* have read
    the assignment (its watch is up): the generation that hands it tasks then reaches it
    at once, instead of while its watch starts, with the old owners already stopped
    (issue 24: 3-4 s pauses)."""
    if pod is None:
        return "no pod yet"
    if pod.terminating:
        return "its pod is terminating"
    if pod.start_fault is not None:
        return f"its pod cannot start ({pod.start_fault.reason}, see Degraded)"
    if not pod.running:
        return "its pod is not running"
    if not pod.reporting:
        return (
            "it does not report (its metrics do not answer, or, for Kafka Streams,"
            " its client is not in the group yet)"
        )
    if pod.generation is None and published is not None:
        return "it has not read the assignment"
    return None


def ready_to_join(pod: PodObs, published: Published | None) -> bool:
    return not_ready(pod, published) is None


def _admit(world: World, roster: Roster) -> None:
    if not roster.joining:
        return
    start = min(roster.joining.values())
    ready = [
        j
        for j, _ in sorted(roster.joining.items())
        if (pod := world.pods.get(j)) is not None and ready_to_join(pod, world.published)
    ]
    deadline = start + world.policy.expansion_timeout
    if ready and (len(ready) == len(roster.joining) or world.now >= deadline):
        roster.admitted = sorted(ready, key=member_sort_key)
        for j in ready:
            del roster.joining[j]
        for j in roster.joining:
            roster.joining[j] = world.now  # late: the next batch starts now
        if roster.joining:
            roster.deadlines.append(world.now + world.policy.expansion_timeout)
            late = sorted(roster.joining, key=member_sort_key)
            roster.events.append(
                Event(
                    "Normal",
                    "JoinDeferred",
                    f"{', '.join(late)} did not report with the assignment read within "
                    f"expansionTimeoutSeconds="
                    f"{world.policy.expansion_timeout:g}s: {', '.join(roster.admitted)} join "
                    f"now, {', '.join(late)} with the next batch",
                )
            )
    elif not ready and world.now >= deadline:  # nobody in time: the first ready joins
        roster.overdue = True
        said = world.conditions.get("Scaling")
        if said is None or OVERDUE not in said.message:  # once, as the status turns
            waiting = "; ".join(
                f"{j}: {not_ready(world.pods.get(j), world.published)}"
                for j in sorted(roster.joining, key=member_sort_key)
            )
            roster.events.append(
                Event(
                    "Warning",
                    "JoinWaiting",
                    f"no joining pod is ready after expansionTimeoutSeconds="
                    f"{world.policy.expansion_timeout:g}s ({waiting}); each joins as soon "
                    "as it reports with the assignment read",
                )
            )
    else:
        roster.deadlines.append(deadline)
