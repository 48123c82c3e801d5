"""Which of the assignor's moves wait: handovers held back by promotion rules.

The assignor (``segue.assignor``) places; :mod:`.placement` asks it and passes its
placement here, where moves the app's settings say must wait are undone for this
generation (each task stays active on its owner; a stateful one goes on warming up on
its new member as a learner). The target is untouched, so :mod:`.hold` keeps it, and the
moves go ahead at the look whose rule lets them:

- ``batch`` learner promotion (seed 000's ``learn.partial.rebalance=false``): a member's
  moves wait until all of its learners are ready;
- ``Policy.warm_first`` (Kafka Streams apps): moves to cold members wait for the first
  handover (:func:`_cold` says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from segue.assignor import AssignRequest
from segue.assignor.ids import parse_task_id

from .model import Policy, Roles


def held_back(
    placed: dict[str, Roles],
    request: AssignRequest,
    policy: Policy,
    stalled: Mapping[str, Iterable[str]],
) -> dict[str, Roles]:
    """``placed`` with the moves ``policy`` says must wait undone (``stalled``: per
    member, the tasks it reports it cannot run)."""
    if policy.learner_promotion == "batch":
        placed = _hold_back(placed, request, _batched(placed, request, stalled))
    if policy.warm_first:
        placed = _hold_back(placed, request, _cold(placed, request, stalled))
    return placed


def _incoming(placed: Mapping[str, Roles], request: AssignRequest) -> dict[str, list[str]]:
    """Per member, the active tasks it takes over from another member still placed."""
    owner = _owners(request)
    return {
        m: [t for t in roles.active if owner.get(t) not in (None, m) and owner[t] in placed]
        for m, roles in placed.items()
    }


def _owners(request: AssignRequest) -> dict[str, str]:
    return {t: m for m, held in request.current.items() for t in held.active}


def _restoring(
    placed: Mapping[str, Roles], stalled: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    """Per member, its learners that restore: one its member cannot run restores nothing,
    and waiting for it would hold moves forever (it is reported as Degraded instead)."""
    return {
        m: [t for t in roles.learning if t not in set(stalled.get(m, ()))]
        for m, roles in placed.items()
    }


def _batched(
    placed: Mapping[str, Roles], request: AssignRequest, stalled: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    """``batch`` promotion: every move to a member that still has learners restoring."""
    restoring = _restoring(placed, stalled)
    return {m: ts for m, ts in _incoming(placed, request).items() if ts and restoring[m]}


def _cold(
    placed: Mapping[str, Roles], request: AssignRequest, stalled: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    """``Policy.warm_first``: while learners restore, the moves to cold members (running
    no active task yet) until a generation hands a stateful task over.

    Why: a Kafka Streams group takes a moved task up over two rebalances, each waiting
    for its slowest member and, under exactly-once, pausing every task's output. A
    stateless task given to a new member in the generation that admits it costs such a
    round while the new JVMs are cold (seen: 1.1-2.6 s for one to rejoin, and the
    counting task the stateless one feeds paused while it warmed up). Held back, it moves
    with the first handover, in a round the group takes anyway."""
    incoming = _incoming(placed, request)
    stateful = {t.id for t in request.tasks if t.stateful}
    if any(stateful.intersection(ts) for ts in incoming.values()):
        return {}  # a handover: everything held goes with it
    if not any(_restoring(placed, stalled).values()):
        return {}  # no learner to wait for
    warm = set(_owners(request).values())
    return {m: ts for m, ts in incoming.items() if ts and m not in warm}


def _hold_back(
    placed: dict[str, Roles], request: AssignRequest, held: Mapping[str, list[str]]
) -> dict[str, Roles]:
    """Undo this generation's moves ``held`` (member -> tasks): each task stays active on
    its owner, and a stateful one goes on warming up on the member as a learner."""
    owner = _owners(request)
    stateful = {t.id for t in request.tasks if t.stateful}
    result = dict(placed)
    for m, incoming in held.items():
        for t in incoming:
            back = result[owner[t]]
            result[owner[t]] = Roles(  # the owner keeps it: as its active, no other copy
                tuple(sorted((*back.active, t), key=parse_task_id)),
                tuple(x for x in back.standby if x != t),
                tuple(x for x in back.learning if x != t),
            )
        mine = result[m]
        learning = (*mine.learning, *(t for t in incoming if t in stateful))
        result[m] = Roles(
            tuple(t for t in mine.active if t not in incoming),
            mine.standby,
            tuple(sorted(learning, key=parse_task_id)),
        )
    return result
