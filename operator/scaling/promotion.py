"""Which of the assignor's moves wait: handovers held back by promotion rules.

The assignor (``segue.assignor``) places; :mod:`.placement` asks it and passes its
placement here, where moves the app's settings say must wait are undone for this
generation (each task stays active on its owner; a stateful one goes on warming up on
its new member as a learner). The target is untouched, so :mod:`.hold` keeps it, and the
moves go ahead at the look whose rule lets them:

- ``batch`` learner promotion (seed 000's ``learn.partial.rebalance=false``): a member's
  moves wait until all of its learners are ready;
- ``Policy.warm_first`` (Kafka Streams apps): moves to a cold member wait for its own
  first handover (``_Moves.cold`` says why);
- ``Policy.learners_first`` (Kafka Streams apps): a member's new standbys wait until its
  learners are handed over and running (``_Moves.standbys_later`` says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from segue.assignor import AssignRequest
from segue.assignor.ids import parse_task_id

from .model import Policy, Roles


def held_back(
    placed: dict[str, Roles],
    request: AssignRequest,
    policy: Policy,
    stalled: Mapping[str, Iterable[str]],
    target: Mapping[str, Iterable[str]],
    *,
    arriving: Iterable[str] = (),
) -> dict[str, Roles]:
    """``placed`` with the moves ``policy`` says must wait undone (``stalled``: per
    member, the tasks it reports it cannot run; ``target``: per member, its active tasks
    in the balanced end state; ``arriving``: the members a published handover has not
    reached yet). Only ``placed`` changes, never the target, so no rule is part of what
    a held target is planned for."""
    if policy.learner_promotion != "batch" and not (policy.warm_first or policy.learners_first):
        return placed
    moves = _Moves(request)
    if policy.learner_promotion == "batch":
        placed = moves.undo(placed, moves.batched(placed, stalled))
    if policy.warm_first:
        placed = moves.undo(placed, moves.cold(placed, stalled, target))
    if policy.learners_first:
        placed = moves.standbys_later(placed, stalled, target, set(arriving))
    return placed


class _Moves:
    """The published owners and the stateful tasks of one request, against which each
    rule finds its moves."""

    def __init__(self, request: AssignRequest) -> None:
        self.owner = {t: m for m, held in request.current.items() for t in held.active}
        self.stateful = {t.id for t in request.tasks if t.stateful}
        self.copies = {m: {*held.standby, *held.learning} for m, held in request.current.items()}
        self.leaving = {m.id for m in request.members if m.leaving}

    def incoming(self, placed: Mapping[str, Roles]) -> dict[str, list[str]]:
        """Per member, the active tasks it takes over from another member still placed."""
        owner = self.owner
        return {
            m: [t for t in roles.active if owner.get(t) not in (None, m) and owner[t] in placed]
            for m, roles in placed.items()
        }

    def batched(
        self, placed: Mapping[str, Roles], stalled: Mapping[str, Iterable[str]]
    ) -> dict[str, list[str]]:
        """``batch`` promotion: every move to a member that still has learners restoring."""
        restoring = _restoring(placed, stalled)
        return {m: ts for m, ts in self.incoming(placed).items() if ts and restoring[m]}

    def cold(
        self,
        placed: Mapping[str, Roles],
        stalled: Mapping[str, Iterable[str]],
        target: Mapping[str, Iterable[str]],
    ) -> dict[str, list[str]]:
        """``Policy.warm_first``: while learners restore, the moves to a cold member
        (running no active task yet) wait for its own first handover; those to a member
        the target gives no stateful task wait for anyone's.

        Why: a Kafka Streams group takes a moved task up over two rebalances, each
        waiting for its slowest member and, under exactly-once, pausing every task's
        output. A stateless task given to a new member in the generation that admits it
        costs such a round while the new JVMs are cold (seen: 1.1-2.6 s for one to
        rejoin, and the counting task the stateless one feeds paused while it warmed
        up). Held back, it moves in a round the group takes anyway; with the member's
        own handover, since in a keyed pipeline the stateless task often feeds the very
        task handed over, whose output would otherwise pause twice (seen on 3 -> 6:
        ``0_5`` moved with another member's handover, ``1_5`` two rounds later, output
        partition 5 paused 7.1 s across both). Its first handover itself does not wait
        for its other learners (each goes within 2 s of catching up, issue 25); ``batch``
        promotion makes it wait, for one round instead of one per learner."""
        restoring = _restoring(placed, stalled)
        if not any(restoring.values()):
            return {}  # no learner to wait for
        incoming = self.incoming(placed)
        handover = any(self.stateful.intersection(ts) for ts in incoming.values())
        warm = set(self.owner.values())
        held = {}
        for m, ts in incoming.items():
            if not ts or m in warm or self.stateful.intersection(ts):
                continue  # nothing to hold, not cold, or its own first handover
            if placed[m].learning and not restoring[m]:
                continue  # its learners cannot run: its handover would never come
            if handover and not self.stateful.intersection(target.get(m, ())):
                continue  # no stateful task comes to it: it goes with anyone's handover
            held[m] = ts
        return held

    def standbys_later(
        self,
        placed: Mapping[str, Roles],
        stalled: Mapping[str, Iterable[str]],
        target: Mapping[str, Iterable[str]],
        arriving: set[str],
    ) -> dict[str, Roles]:
        """``Policy.learners_first``: a member's standbys it holds no copy of yet wait
        while the target gives it a stateful task it does not run yet (it restores the
        learner, takes the task over in this generation, or has a published handover not
        running yet); each stays on the member that held it, if that one stays and holds
        no other copy of the task.

        Why: a Kafka Streams instance restores its copies one at a time, in an order of
        its own. Given its learners and its new standbys at once, a new pod restored the
        standbys first in some runs, and in others was restoring one (40,000 records)
        when its handover came: the new owner then took 0.7 s from the rebalance to
        running its tasks, against 0.3 s with nothing restoring, and the moved tasks'
        output paused 1.0-1.3 s against 0.6 s (WordCount 2 -> 3, docs/benchmarks.md).
        Afterwards the standbys restore while the member runs its actives."""
        restoring = _restoring(placed, stalled)
        incoming = self.incoming(placed)
        result = dict(placed)
        for m, roles in placed.items():
            due = self.stateful.intersection(target.get(m, ())).difference(roles.active)
            busy = due or restoring[m] or self.stateful.intersection(incoming[m]) or m in arriving
            later = [t for t in roles.standby if t not in self.copies.get(m, ())]
            if not busy or not later:
                continue
            result[m] = replace(roles, standby=tuple(t for t in roles.standby if t not in later))
            for t in later:
                kept = next(
                    (
                        h
                        for h, had in self.copies.items()
                        if t in had
                        and h in result
                        and h not in self.leaving
                        and t not in result[h].tasks()
                    ),
                    None,
                )
                if kept is not None:
                    back = result[kept]
                    standby = tuple(sorted((*back.standby, t), key=parse_task_id))
                    result[kept] = replace(back, standby=standby)
        return result

    def undo(self, placed: dict[str, Roles], held: Mapping[str, list[str]]) -> dict[str, Roles]:
        """Undo the moves ``held`` (member -> tasks): each task stays active on its owner,
        and a stateful one goes on warming up on the member as a learner."""
        result = dict(placed)
        for m, incoming in held.items():
            for t in incoming:
                back = result[self.owner[t]]
                result[self.owner[t]] = Roles(  # the owner keeps it: active, no other copy
                    tuple(sorted((*back.active, t), key=parse_task_id)),
                    tuple(x for x in back.standby if x != t),
                    tuple(x for x in back.learning if x != t),
                )
            mine = result[m]
            learning = (*mine.learning, *(t for t in incoming if t in self.stateful))
            result[m] = Roles(
                tuple(t for t in mine.active if t not in incoming),
                mine.standby,
                tuple(sorted(learning, key=parse_task_id)),
            )
        return result


def _restoring(
    placed: Mapping[str, Roles], stalled: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    """Per member, its learners that restore: one its member cannot run restores nothing,
    and waiting for it would hold moves forever (it is reported as Degraded instead)."""
    return {
        m: [t for t in roles.learning if t not in set(stalled.get(m, ()))]
        for m, roles in placed.items()
    }
