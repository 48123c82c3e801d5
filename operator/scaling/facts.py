"""The facts the status is assessed from (:mod:`.assessment`): who runs what, each
member's role, the degradations and the Scaling condition's reason, in words a person
acts on. :mod:`.core` calls it once per look, after the placement is decided.
"""

from __future__ import annotations

from segue.assignor import Decision
from segue.assignor.ids import member_sort_key, parse_task_id

from .assessment import Facts
from .faults import fault_degradations, member_faults, start_degradations
from .group_wait import GROUP_WAITING
from .inventory import Degradation, Inventory
from .model import MemberRole, Memory, Published, World
from .placement import lags
from .rollout import Rollout
from .roster import OVERDUE, not_ready
from .running import listing


def gather_facts(
    world: World,
    *,
    rollout: Rollout,
    inventory: Inventory,
    in_force: Published | None,
    decision: Decision | None,
    degradations: list[Degradation],
    memory: Memory,
    overdue: bool,
) -> Facts:
    """``overdue``: no joiner was ready within expansionTimeoutSeconds (:mod:`.roster`)."""
    members = dict(in_force.members) if in_force else {}
    roles: dict[str, MemberRole] = {m: "member" for m in members}
    for m in memory.absent:
        roles[m] = "absent"
    for m in memory.rolling:
        roles[m] = "rolling"
    for m in memory.leaving:
        roles[m] = "leaving"
    for m in memory.joining:
        roles[m] = "joining"
    learning = sum(len(r.learning) for r in members.values())
    pending = decision.stats.pending if decision is not None else 0
    faults = member_faults(world, members)
    degradations = [*degradations, *start_degradations(world), *fault_degradations(faults)]
    stuck = sum(1 for m, r in members.items() for t in r.learning if t in faults.get(m, {}))
    if memory.forced_at is not None and not settled(memory, learning, pending):
        degradations = [
            *degradations,
            Degradation(
                "ScaleDownTimeout",
                "a scale-down hit scaleDownTimeoutSeconds: "
                "tasks went to the most caught-up members",
            ),
        ]
    for m, since in sorted(memory.absent.items()):
        if m not in memory.leaving and m not in memory.rolling:
            message = absence(m, world.now - since, world.policy.registration_timeout)
            degradations.append(Degradation("MemberAbsent", message))
    if memory.joining:
        reason: str | None = "ScalingUp"
        joiners = sorted(memory.joining, key=member_sort_key)
        waits = [
            f"; {j}: {why}"
            for j in joiners
            if (why := not_ready(world.pods.get(j), world.published))
        ]
        message = f"{len(joiners)} pod(s) joining: {', '.join(joiners)}{''.join(waits)}"
        if overdue:
            message += f" ({OVERDUE}={world.policy.expansion_timeout:g}s)"
    elif memory.leaving:
        reason = "ScalingDown"
        message = f"{len(memory.leaving)} pod(s) leaving: {', '.join(sorted(memory.leaving))}"
    elif learning or pending or memory.handovers:
        reason = "Rebalancing"
        message = f"{learning - stuck} learner(s) restoring, {pending} task(s) still to move"
        bound = world.policy.max_warmup_replicas
        warming = decision.stats.learners_restoring if decision is not None else 0
        if pending > learning and warming >= bound:  # the rest wait for a slot: name the knob
            message += f" (maxWarmupReplicas={bound} warm up at a time)"
        if stuck:
            message += f"; {stuck} learner(s) cannot run (see Degraded): their tasks stay put"
        if not (learning or pending):  # only handovers left: their new owners do not run them
            message = handing_over(memory)
    else:
        reason, message = None, ""
    group = world.group_wait
    if group is not None and group.waiting:  # not settled while the group waits
        reason = reason or GROUP_WAITING
        message = f"{message}; {group.message()}" if message else group.message()
    return Facts(
        suspended=world.replicas == 0,
        rolling=tuple(sorted(rollout.rolling)),
        outdated=len(rollout.outdated),
        updated=rollout.updated,
        members=members,
        roles=roles,
        lags=lags(world, inventory, members),
        pods=world.pods,
        generation=in_force.generation if in_force else 0,
        pending=pending,
        degradations=tuple(degradations),
        scaling_reason=reason,
        scaling_message=message,
        handing_over=frozenset(memory.handovers),
    )


def handing_over(memory: Memory) -> str:
    """The ``Rebalancing`` message once only handovers are in flight: each waits for its
    new owner to run the task (:mod:`.handovers`)."""
    moving = sorted(memory.handovers.items(), key=lambda x: parse_task_id(x[0]))
    named = listing([f"{t} to {h.to}" for t, h in moving])
    return f"{len(moving)} handover(s) in flight, not running on the new owner yet: {named}"


def absence(member: str, away: float, timeout: float) -> str:
    """The ``MemberAbsent`` message: ``away`` seconds gone, ``timeout`` the
    registrationTimeoutSeconds. It names no duration: a message that changed at every
    look would change the condition and post its Warning again at every look."""
    if timeout <= 0:
        return (
            f"{member} is away; with registrationTimeoutSeconds=0 its tasks go to the other "
            "members at once, and it rejoins when its pod reports again"
        )
    if away >= timeout:  # as Roster.expired: its tasks left it
        return (
            f"{member} is away past registrationTimeoutSeconds={timeout:g}s: its tasks go to "
            "the other members, and it rejoins when its pod reports again"
        )
    return (
        f"{member} is away; its tasks wait for it up to registrationTimeoutSeconds="
        f"{timeout:g}s, then go to the other members"
    )


def settled(memory: Memory, learning: int, pending: int) -> bool:
    """Nothing of a scale left: nobody joining or leaving, no handover, learner or move."""
    return not (memory.joining or memory.leaving or memory.handovers or learning or pending)
