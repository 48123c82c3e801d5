"""The held target: a published target kept while its learners make progress (issue 24).

Every look could solve afresh, but each solve is an optimum for its own moment only: a
copy that caught up since the last look is a new zero-restore home, so a fresh target
could move a task twice within one scale or switch a learner halfway through its
restore. So the machine remembers the target it planned (:class:`Held`, in
``Memory.held``) and hands it back to the assignor (``AssignRequest.hold``) until one of
these changes, and then plans afresh with an event that says which:

- membership: who is in the assignment, who is leaving;
- partitions: the task set;
- capacity: a member's threads or rack;
- the spec: the scaling settings the assignor reads;
- a member of the target fails (its pod is gone, failed or not reporting);
- a learner makes no progress (its lag does not drop) for :data:`STALL_SECONDS`;
- the assignor refuses the hold (it no longer fits, naming why).

Only what differs from the published owners is stored (``moves``), so the status stays
small; a settled app holds nothing. :mod:`.core` calls :func:`placement`; the assignor's
side is ``segue.assignor.hold``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from segue.assignor import AssignorError, AssignRequest, Decision
from segue.assignor.ids import member_sort_key

from . import handovers
from .model import Event, Held, Policy, Progress, Roles, World
from .placement import place

STALL_SECONDS = 30.0  # a learner whose lag has not dropped for this long is stalled


# basis part -> how a change of it is said in the event
PARTS = {
    "members": "membership changed",
    "tasks": "partitions changed",
    "capacity": "a member's capacity changed",
    "spec": "the spec's scaling settings changed",
}


def basis(request: AssignRequest, policy: Policy) -> dict[str, str]:
    """Digests of what a target is planned for (:data:`PARTS`)."""
    config = request.config.model_dump(mode="json")
    return {
        "members": _digest(tuple(sorted((m.id, m.leaving) for m in request.members))),
        "tasks": _digest(tuple(sorted((t.id, t.stateful) for t in request.tasks))),
        "capacity": _digest(
            tuple(sorted((m.id, m.capacity, m.rack or "") for m in request.members))
        ),
        "spec": _spec_digest(tuple(sorted(config.items())), policy.learner_promotion),
    }


@lru_cache(maxsize=1024)  # every look digests the same rows again
def _digest(rows: tuple[tuple[object, ...], ...]) -> str:
    return _sha256(rows)


@lru_cache(maxsize=64)
def _spec_digest(config: tuple[tuple[str, object], ...], promotion: str) -> str:
    return _sha256([dict(config), promotion])


def _sha256(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def placement(
    world: World, request: AssignRequest, stalled: Mapping[str, set[str]]
) -> tuple[dict[str, Roles], Decision, Held | None, list[Event]]:
    """The placement, with the held target if it still stands; the target to hold next
    (None once settled) and the event of a re-plan."""
    held = world.memory.held
    now_basis = basis(request, world.policy)
    progress = _progress(world, request, held)
    reason = _replan_reason(world, request, held, now_basis, progress) if held else None
    events: list[Event] = []
    placed = decision = None
    request = _anticipated(world, request, progress)
    arriving = handovers.arriving(world)
    if held is not None and reason is None:
        try:
            kept = {"hold": _target(request, held), "hold_standbys": _standbys(request, held)}
            placed, decision = place(
                request.model_copy(update=kept), world.policy, stalled, arriving
            )
        except AssignorError as refused:
            reason = f"the held target no longer fits: {refused}"
    if placed is None or decision is None:
        placed, decision = place(request, world.policy, stalled, arriving)
    if reason is not None:
        events.append(Event("Normal", "TargetReplanned", f"the target is planned again: {reason}"))
        progress = {t: replace(p, since=world.now) for t, p in progress.items()}
    return placed, decision, _next(request, decision, now_basis, progress), events


def _anticipated(
    world: World, request: AssignRequest, progress: Mapping[str, Progress]
) -> AssignRequest:
    """``request`` with the learners ``Policy.handover_lead`` counts as caught up given
    the acceptable lag: each expected within it in ``handover_lead`` seconds at its own
    rate (the group takes the handover up a rebalance later, and the learner restores on
    meanwhile), and, when some learner is handed over anyway, each expected within twice
    that. Learners catching up a second apart then go in one revoking round rather than
    one each: under exactly-once every round pauses the whole group for two rebalances.
    A learner without a rate of its own (not begun, as a Kafka Streams instance's second
    copy while it restores its first) is never counted caught up: estimated from its
    member's other learner, one was handed over 22,326 records behind and restored them
    as an active, not processing meanwhile."""
    lead, acceptable = world.policy.handover_lead, world.policy.acceptable_recovery_lag
    if lead <= 0:
        return request
    etas: dict[tuple[str, str], float] = {}
    caught_up = False
    for task, p in progress.items():
        lag = request.lags.get(p.member, {}).get(task)
        eta = p.eta(acceptable, world.now)
        if lag is None or eta is None:
            continue
        if lag <= acceptable:
            caught_up = True
        elif eta <= 2 * lead:
            etas[(p.member, task)] = eta
    caught_up = caught_up or any(eta <= lead for eta in etas.values())
    if not etas or not caught_up:
        return request
    lags = {m: dict(ls) for m, ls in request.lags.items()}
    for member, task in etas:
        lags[member][task] = acceptable
    return request.model_copy(update={"lags": lags})


def _target(request: AssignRequest, held: Held) -> dict[str, str]:
    owner = {t: m for m, roles in request.current.items() for t in roles.active}
    return {t.id: held.moves.get(t.id, owner.get(t.id, "")) for t in request.tasks}


def _standbys(request: AssignRequest, held: Held) -> dict[str, list[str]]:
    """Every stateful task's target standbys: those held, else the published ones; none
    without standbys (the assignor then has nothing to keep)."""
    if request.config.num_standby_replicas == 0:
        return {}
    current = _current_standbys(request)
    return {
        t.id: list(held.standbys.get(t.id, current.get(t.id, ())))
        for t in request.tasks
        if t.stateful
    }


def _current_standbys(request: AssignRequest) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for member, roles in request.current.items():
        for task in roles.standby:
            out.setdefault(task, []).append(member)
    return {t: tuple(sorted(ms, key=member_sort_key)) for t, ms in out.items()}


def _replan_reason(
    world: World,
    request: AssignRequest,
    held: Held,
    now_basis: Mapping[str, str],
    progress: Mapping[str, Progress],
) -> str | None:
    changed = [part for part in PARTS if held.basis.get(part) != now_basis[part]]
    if "members" in changed and "capacity" in changed:  # the capacity digest names members
        changed.remove("capacity")
    if changed:
        return "; ".join(PARTS[part] for part in changed)
    for member in sorted(set(held.moves.values())):
        pod = world.pods.get(member)
        if pod is None or pod.failed or pod.terminating:  # a silent one: see the stall
            return f"{member}, a member of the target, failed (its pod is gone)"
    for task, p in sorted(progress.items()):
        if world.now - p.since >= STALL_SECONDS:
            return (
                f"the learner of {task} on {p.member} made no progress for "
                f"{world.now - p.since:.0f}s ({p.lag} records behind)"
            )
    owned = {t for roles in request.current.values() for t in roles.active}
    missing = sorted(t.id for t in request.tasks if t.id not in owned and t.id not in held.moves)
    if missing:
        return f"task(s) without an owner or a target: {', '.join(missing[:5])}"
    return None


def _progress(world: World, request: AssignRequest, held: Held | None) -> dict[str, Progress]:
    """Each running learner's best lag and when it last dropped (new learners: now).

    Until its lag first drops, a learner's start moves to each look (``started``; not
    ``since``, which times a stall): a new pod's copy starts restoring only once its
    process has joined and been through the rebalances of its batch, and a rate timed
    from the assignment counted those seconds as restoring (a trace: several times too
    slow). Its rate is then timed from the last look before it began; the status's
    expected catch-up and a Kafka Streams group's next rebalance
    (``segue.operator.kstreams.answer``) are timed from it."""
    before = held.progress if held else {}
    out: dict[str, Progress] = {}
    for member, roles in request.current.items():
        for task in roles.learning:
            lag = request.lags.get(member, {}).get(task)
            if lag is None:
                continue
            was = before.get(task)
            if was is None or was.member != member:
                out[task] = Progress(member, lag, world.now, lag, world.now)
            elif lag < was.lag:
                out[task] = replace(was, lag=lag, since=world.now)
            elif was.lag >= was.start_lag:  # not begun yet
                out[task] = replace(was, started=world.now)
            else:
                out[task] = was
    return out


def _next(
    request: AssignRequest,
    decision: Decision,
    now_basis: Mapping[str, str],
    progress: Mapping[str, Progress],
) -> Held | None:
    owner = {t: m for m, roles in request.current.items() for t in roles.active}
    moves = {
        t: m for m, roles in decision.target.items() for t in roles.active if owner.get(t) != m
    }
    current = _current_standbys(request)
    wanted: dict[str, list[str]] = {}
    for m, roles in decision.target.items():
        for t in roles.standby:
            wanted.setdefault(t, []).append(m)
    standbys = {
        t: ordered
        for t, ms in wanted.items()
        if (ordered := tuple(sorted(ms, key=member_sort_key))) != current.get(t, ())
    }
    if not moves and not standbys:
        return None  # at the target: nothing to hold, the next change plans afresh
    learning = {t for roles in decision.assignment.values() for t in roles.learning}
    return Held(
        moves,
        dict(now_basis),
        {t: p for t, p in progress.items() if t in learning},
        standbys=standbys,
    )
