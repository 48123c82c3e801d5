"""The entry point: one request in, one :class:`~.model.Decision` out.

``assign`` chains the pieces: :mod:`.problem` indexes and checks the request, :mod:`.actives`
and :mod:`.standbys` compute the balanced target, :mod:`.movement` the assignment that runs
now, and this module counts what it costs. It is pure and deterministic: the operator calls it
every reconcile, the simulator every tick, ``segue assign`` once.
"""

from __future__ import annotations

from .actives import active_tiers, place_actives
from .hold import held_actives, held_standbys
from .model import AssignedTasks, AssignRequest, Decision, Stats, TargetTasks
from .movement import Movement, plan_movement
from .problem import NO_MEMBER, Problem, build_problem
from .standbys import StandbyPlan, place_standbys, standby_count


def assign(request: AssignRequest) -> Decision:
    """The balanced target (or the one held, :mod:`.hold`), the immediate assignment
    towards it, and their stats."""
    problem = build_problem(request)
    if not request.hold:
        return solve(problem)
    held = held_actives(problem, request.hold)
    if not request.hold_standbys:
        return solve(problem, held)
    replicas = standby_count(problem, problem.eligible())
    standbys = held_standbys(problem, held, request.hold_standbys, replicas)
    return solve(problem, held, StandbyPlan(standbys, replicas, relaxed=False))


def solve(
    problem: Problem, held: list[int] | None = None, standbys: StandbyPlan | None = None
) -> Decision:
    """The target (solved, or held: then no flow is solved for what is held), the
    movement towards it, and their stats."""
    eligible = problem.eligible()
    tiers = active_tiers(problem)
    target = held if held is not None else place_actives(problem, eligible, tiers)
    plan = standbys if standbys is not None else place_standbys(problem, eligible, target)
    movement = plan_movement(problem, target, plan.standbys)
    return Decision.model_construct(
        target=_target_map(problem, target, plan),
        assignment=_assignment_map(problem, movement),
        stats=_stats(problem, target, plan, movement, tiers.quantum),
    )


def _target_map(problem: Problem, target: list[int], plan: StandbyPlan) -> dict[str, TargetTasks]:
    active: list[list[str]] = [[] for _ in problem.members]
    standby: list[list[str]] = [[] for _ in problem.members]
    for t, name in enumerate(problem.task_ids):  # task order, so every list comes out sorted
        active[target[t]].append(name)
        for m in plan.standbys[t]:
            standby[m].append(name)
    return {
        state.id: TargetTasks.model_construct(active=active[m], standby=standby[m])
        for m, state in enumerate(problem.members)
    }


def _assignment_map(problem: Problem, movement: Movement) -> dict[str, AssignedTasks]:
    active: list[list[str]] = [[] for _ in problem.members]
    standby: list[list[str]] = [[] for _ in problem.members]
    learning: list[list[str]] = [[] for _ in problem.members]
    for t, name in enumerate(problem.task_ids):
        active[movement.active[t]].append(name)
        for m in movement.standbys[t]:
            standby[m].append(name)
        if movement.learner[t] != NO_MEMBER:
            learning[movement.learner[t]].append(name)
    return {
        state.id: AssignedTasks.model_construct(
            active=active[m], standby=standby[m], learning=learning[m]
        )
        for m, state in enumerate(problem.members)
    }


def _stats(
    problem: Problem, target: list[int], plan: StandbyPlan, movement: Movement, quantum: int
) -> Stats:
    moves = stateful_moves = restores = restored_bytes = handovers = pending = same_rack = 0
    for t in range(len(problem.task_ids)):
        had_owner = problem.owner[t] != NO_MEMBER or problem.orphaned[t]
        if had_owner and target[t] != problem.owner[t]:
            moves += 1
            stateful_moves += problem.stateful[t]
        if had_owner and movement.active[t] != problem.owner[t]:
            handovers += 1
        pending += movement.active[t] != target[t]
        if not problem.stateful[t]:
            continue
        rack = problem.members[target[t]].rack
        for m in (target[t], *plan.standbys[t]):
            if not problem.caught_up(t, m):
                restores += 1
                restored_bytes += problem.to_restore(t, m)
        same_rack += sum(
            1 for m in plan.standbys[t] if rack is not None and problem.members[m].rack == rack
        )
    budget = problem.config.max_warmup_replicas
    rounds = 0 if pending == 0 else 1 + -(-movement.waiting // budget)
    return Stats.model_construct(
        tasks=len(problem.task_ids),
        members=len(problem.members),
        moves=moves,
        stateful_moves=stateful_moves,
        restores=restores,
        bytes_to_restore=restored_bytes if problem.sizes_known else None,
        handovers=handovers,
        learners=sum(1 for m in movement.learner if m != NO_MEMBER),
        learners_restoring=movement.restoring,
        pending=pending,
        rounds_hint=rounds,
        standby_replicas=plan.replicas,
        same_rack_standbys=same_rack,
        standby_balance_relaxed=plan.relaxed,
        bytes_quantum=quantum,
    )
