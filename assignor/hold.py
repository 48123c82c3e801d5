"""A held target: the actives a caller keeps from an earlier decision instead of a new solve.

Each solve is an exact optimum for the moment it looks at, but a sequence of them is not
stable: a copy that caught up since the last look is a new zero-restore home, so a target
could change under learners halfway through their restore (issue 24). The scaling state
machine therefore holds a published target while its learners progress and passes it
back as ``AssignRequest.hold``; :func:`.solve.assign` then skips :mod:`.actives` and plans
the standbys and the movement towards it. The hold must still fit the request exactly
(every task, each on an eligible member, the three balances met): what does not is refused
naming the item, and the caller plans afresh. Nothing here repairs a hold, which would be a
new target under an old name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from .actives import active_balance
from .errors import InvalidRequest
from .problem import NO_MEMBER, Problem


def held_actives(problem: Problem, hold: Mapping[str, str]) -> list[int]:
    """Member index of each task's held target active; raises :class:`InvalidRequest`.

    A held target comes back on every look of a scale, checked against the same tasks
    and members: the check reads only the problem's shape and the hold, so its result is
    kept for the few shapes a caller goes through (a scale is one or two)."""
    return list(_checked(_ByShape(problem), tuple(sorted(hold.items()))))


class _ByShape:
    """A problem that hashes and compares by its shape, what the check reads."""

    __slots__ = ("problem",)

    def __init__(self, problem: Problem) -> None:
        self.problem = problem

    def __hash__(self) -> int:
        return hash(self.problem.shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByShape) and other.problem.shape == self.problem.shape


@lru_cache(maxsize=8)
def _checked(problem: _ByShape, hold: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
    return tuple(_held_actives(problem.problem, dict(hold)))


def _held_actives(problem: Problem, hold: Mapping[str, str]) -> list[int]:
    index = {name: t for t, name in enumerate(problem.task_ids)}
    position = {state.id: m for m, state in enumerate(problem.members)}
    target = [NO_MEMBER] * len(problem.task_ids)
    for name, member in sorted(hold.items()):
        t = index.get(name)
        if t is None:
            raise InvalidRequest(f"hold names task {name!r}, which is not in tasks")
        m = position.get(member)
        if m is None:
            raise InvalidRequest(f"hold puts task {name!r} on {member!r}, which is not in members")
        if problem.members[m].leaving:
            raise InvalidRequest(f"hold puts task {name!r} on {member!r}, which is leaving")
        target[t] = m
    missing = [problem.task_ids[t] for t, m in enumerate(target) if m == NO_MEMBER]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise InvalidRequest(f"hold leaves out task(s) {shown}")
    _check_balance(problem, target)
    return target


def held_standbys(
    problem: Problem, target: list[int], hold: Mapping[str, Sequence[str]], replicas: int
) -> list[tuple[int, ...]]:
    """Member indexes of each task's held target standbys; raises :class:`InvalidRequest`.
    Every stateful task needs ``replicas`` of them on distinct members that are in the
    assignment, not leaving, and not its held active's."""
    index = {name: t for t, name in enumerate(problem.task_ids)}
    position = {state.id: m for m, state in enumerate(problem.members)}
    out: list[tuple[int, ...]] = [() for _ in problem.task_ids]
    for name, members in sorted(hold.items()):
        t = index.get(name)
        if t is None or not problem.stateful[t]:
            raise InvalidRequest(f"hold_standbys names task {name!r}, not a stateful task")
        found = []
        for member in members:
            m = position.get(member)
            if m is None or problem.members[m].leaving:
                raise InvalidRequest(
                    f"hold_standbys puts task {name!r} on {member!r}, not a member staying"
                )
            if m == target[t] or m in found:
                raise InvalidRequest(f"hold_standbys puts task {name!r} twice on {member!r}")
            found.append(m)
        out[t] = tuple(found)
    short = [
        problem.task_ids[t]
        for t in range(len(out))
        if problem.stateful[t] and len(out[t]) != replicas
    ]
    if short:
        raise InvalidRequest(
            f"hold_standbys gives task(s) {', '.join(short[:5])} other than {replicas} standbys"
        )
    return out


def _check_balance(problem: Problem, target: list[int]) -> None:
    eligible = problem.eligible()
    balance = active_balance(problem, eligible)
    counts: dict[tuple[str, int], int] = {}
    for t, m in enumerate(target):
        kinds = ("all", "stateful" if problem.stateful[t] else "", f"g{problem.subtopology[t]}")
        for kind in kinds:
            if kind:
                counts[(kind, m)] = counts.get((kind, m), 0) + 1
    for e, m in enumerate(eligible):
        checks = [("tasks", balance.total, counts.get(("all", m), 0))]
        checks.append(("stateful tasks", balance.stateful, counts.get(("stateful", m), 0)))
        checks += [
            (f"tasks of sub-topology {g}", bounds, counts.get((f"g{g}", m), 0))
            for g, bounds in balance.per_group.items()
        ]
        for what, bounds, n in checks:
            if not bounds.admits(e, n):
                raise InvalidRequest(
                    f"hold is not balanced: {problem.members[m].id!r} holds {n} {what}, "
                    f"bounds [{bounds.lower[e]}, {bounds.upper[e]}]"
                )
