"""The facts the status is assessed from (:mod:`.assessment`): who runs what, each
member's role, the degradations and the Scaling condition's reason, in words a person
acts on. :mod:`.core` calls it once per look, after the placement is decided.
"""

from __future__ import annotations

from segue.assignor import Decision
from segue.assignor.ids import member_sort_key

from .assessment import Facts
from .faults import fault_degradations, member_faults
from .inventory import Degradation, Inventory
from .model import MemberRole, Memory, Published, World
from .placement import lags
from .rollout import Rollout
from .roster import OVERDUE, not_ready


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
    degradations = [*degradations, *fault_degradations(faults)]
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
            degradations.append(
                Degradation(
                    "MemberAbsent",
                    f"{m} away since t={since:.0f}; its tasks wait for it until "
                    f"registrationTimeoutSeconds={world.policy.registration_timeout:g} passes",
                )
            )
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
    else:
        reason, message = None, ""
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
        acceptable_lag=world.policy.acceptable_recovery_lag,
        degradations=tuple(degradations),
        scaling_reason=reason,
        scaling_message=message,
    )


def settled(memory: Memory, learning: int, pending: int) -> bool:
    """Nothing of a scale left: nobody joining or leaving, no handover, learner or move."""
    return not (memory.joining or memory.leaving or memory.handovers or learning or pending)
