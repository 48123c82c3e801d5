"""One step of the scaling state machine: ``decide(world) -> plan``.

Order of reasoning: the task set (:mod:`.tasks`), who belongs (:mod:`.roster`), who is
left out of this assignment (members past ``scaleDownTimeoutSeconds`` or
``registrationTimeoutSeconds``: the assignor gives their tasks to the most caught-up
members), the placement (:mod:`.placement`), which leaving members can go (no active
task any more, and their pod has applied that), then the document, events and status
(:mod:`.status`). Every step is recomputed from the world, so a step that was not
carried out (the operator died) is simply decided again.
"""

from __future__ import annotations

from dataclasses import replace

from segue.assignor import AssignorError, Decision
from segue.assignor.ids import member_sort_key

from .assessment import assess
from .events import degraded_events, membership_events, publish_events
from .facts import gather_facts, settled
from .handovers import track_handovers
from .hanging import hanging_condition, hanging_events
from .hold import placement as hold_placement
from .inventory import Degradation, Inventory, inventory_of
from .model import (
    Event,
    Held,
    Memory,
    Plan,
    Published,
    Roles,
    World,
)
from .placement import build_request, cheapest_to_remove, lags
from .publication import publication, refence
from .replication import replication_condition, replication_events
from .rollout import handing_over, plan_rollout, restart_events, restarts
from .roster import Roster, plan_roster


def decide(world: World) -> Plan:
    published, policy, now = world.published, world.policy, world.now
    inventory = inventory_of(world)
    degradations = list(inventory.degradations)
    events = [Event("Normal", "PartitionsExpanded", m) for m in inventory.expanded]

    def cheapest(candidates: list[str], count: int) -> list[str]:
        request = build_request(world, inventory, candidates, set(), published)
        try:
            return cheapest_to_remove(request, count)
        except AssignorError:
            return sorted(candidates, key=member_sort_key)[-count:] if count else []

    roster = plan_roster(world, published, cheapest)
    events += roster.events
    forced = sorted(
        (
            m
            for m, since in roster.leaving.items()
            if now - since >= policy.scale_down_timeout or _gone(world, m)
        ),
        key=member_sort_key,
    )
    expired = [
        m
        for m in roster.members
        if m not in roster.leaving and roster.expired(m, policy.registration_timeout, now)
    ]
    members_in = [m for m in roster.members if m not in forced and m not in expired]
    members_in = sorted({*members_in, *roster.admitted}, key=member_sort_key)
    leaving = {m for m in roster.leaving if m not in forced}
    away = {m for m in roster.absent if m not in world.memory.rolling}
    quiet = not (roster.joining or roster.leaving or away or roster.admitted)
    rollout = plan_rollout(
        world, [m for m in members_in if m not in leaving], quiet and not world.memory.handovers
    )
    events += rollout.events

    placed, decision, held = _placement(
        world, inventory, members_in, leaving | handing_over(rollout), degradations=degradations,
        events=events,
    )  # fmt: skip

    departed = _departures(world, roster, placed, forced) if placed is not None else []
    fenced = refence(world)
    publish, document, departed = publication(
        world,
        placed=placed,
        expired=expired,
        departed=departed,
        inventory=inventory,
        degradations=degradations,
        refence_due=bool(fenced.due),
    )
    for m in departed:
        roster.leaving.pop(m, None)
        roster.absent.pop(m, None)
        if m in world.pods:
            roster.delete.append(m)
    events += membership_events(world, forced, departed, expired)
    restart = restarts(world, rollout, placed)
    roster.delete.extend(restart)  # recreated from the new template; the claim stays
    events += restart_events(world, rollout, restart)

    in_force = publish or published
    handovers, done, moved = track_handovers(world, publish, in_force)
    if publish is not None:
        events += publish_events(published, publish, moved, lags(world, inventory, owners(moved)))
        events += fenced.events(publish.generation)
    memory = Memory(
        joining=dict(roster.joining),
        leaving=dict(roster.leaving),
        absent={m: t for m, t in roster.absent.items() if m not in departed},
        handovers=handovers,
        forced_at=now if forced else world.memory.forced_at,
        last_scale=now if roster.scaled else world.memory.last_scale,
        rolling=rollout.rolling,
        refenced=fenced.memory(world, publish is not None),
        held=held,
    )
    facts = gather_facts(
        world,
        rollout=rollout,
        inventory=inventory,
        in_force=in_force,
        decision=decision,
        degradations=degradations,
        memory=memory,
        overdue=roster.overdue,
    )
    status = assess(facts)
    kafka, ended = replication_condition(world.replication), hanging_condition(world)
    status = replace(status, conditions=(*status.conditions, kafka, ended))
    events += [*replication_events(world, kafka), *hanging_events(world, ended)]
    if memory.forced_at is not None and settled(memory, _learning(in_force), facts.pending):
        # the forced handovers have completed: the condition has said its piece
        memory = replace(memory, forced_at=None)
    events += degraded_events(world, status.condition("Degraded"))
    learners = _learning(in_force)
    deadlines = [*roster.deadlines]
    deadlines += [t + policy.scale_down_timeout for t in memory.leaving.values()]
    deadlines += [t + policy.registration_timeout for t in memory.absent.values()]
    deadlines += fenced.held.values()
    return Plan(
        publish=publish,
        document=document,
        create_pods=tuple(n for n in roster.create if n not in departed),
        delete_pods=tuple(dict.fromkeys(roster.delete)),
        delete_claims=tuple(m for m in departed if not policy.retain_state),
        memory=memory,
        assessment=status,
        events=tuple(events),
        handovers_done=tuple(done),
        handovers_published=len(moved),
        learners=learners,
        busy=bool(
            facts.scaling_reason
            or handovers
            or facts.pending
            or publish is not None
            or rollout.rolling
        ),
        wake_at=min(deadlines) if deadlines else None,
    )


def _placement(
    world: World,
    inventory: Inventory,
    members_in: list[str],
    leaving: set[str],
    *,
    degradations: list[Degradation],
    events: list[Event],
) -> tuple[dict[str, Roles] | None, Decision | None, Held | None]:
    """The assignor's placement (towards the held target while it stands, :mod:`.hold`);
    suspended (0 replicas): every task released, none taken."""
    published = world.published
    if world.replicas == 0:
        return ({m: Roles() for m in members_in} if published is not None else None), None, None
    if not members_in or not (inventory.tasks or published is not None):
        return None, None, None
    stalled = {m: set(pod.faults) for m, pod in world.pods.items() if pod.faults}
    try:
        request = build_request(world, inventory, members_in, leaving, published)
        placed, decision, held, replanned = hold_placement(world, request, stalled)
    except AssignorError as refused:
        degradations.append(Degradation("AssignorRejected", str(refused)))
        return None, None, None
    events += replanned
    return placed, decision, held


def _gone(world: World, member: str) -> bool:
    pod = world.pods.get(member)
    return pod is None or pod.terminating or pod.failed


def _departures(
    world: World, roster: Roster, placed: dict[str, Roles], forced: list[str]
) -> list[str]:
    """Leaving members that can go: forced ones, and those whose handovers have applied,
    or under ``Policy.leave_hands_over`` are decided now. A Kafka Streams instance hands
    its tasks over by leaving: it commits and closes them, leaves the group, and the
    rebalance its leave starts gives them to their new owners. Deleted only once the
    group had taken the handover up, its leave made a rebalance of its own: a revoking
    one, the one that placed the tasks, then the leave's, every member pausing in each,
    and an ask to rejoin published while the second ran was lost on the members it
    reached before that one ended (docs/benchmarks.md, "Scale-downs with Kafka Streams'
    defaults")."""
    published = world.published
    out = list(forced)
    for m in roster.leaving:
        if m in forced or placed.get(m, Roles()).active or published is None:
            continue
        if world.policy.leave_hands_over:
            out.append(m)
            continue
        pod = world.pods.get(m)
        was = published.members.get(m)
        if (
            was is not None
            and not was.active
            and (pod is None or not pod.reporting or (pod.generation or 0) >= published.generation)
        ):
            out.append(m)
    return out


def owners(moved: list[tuple[str, str, str]]) -> list[str]:
    """The new owners of moved tasks ((task, from, to) each)."""
    return sorted({to for _, _, to in moved})


def _learning(published: Published | None) -> int:
    return sum(len(r.learning) for r in (published.members.values() if published else ()))
