"""Which members a scale-down removes: those whose departure moves the fewest state bytes.

Every replica (active or standby) a leaving member holds must be rebuilt on a member that
stays: an active's caught-up standby can take over at once, but then that standby must be
rebuilt. So the bytes a departure moves are the sum of its replicas' sizes, and the cost of a
set of departures is the sum over its members: the cheapest set is the ``count`` cheapest
members. Ties go to the highest pod ordinal (natural order), so names stay compact. When
sizes are unknown every replica counts as one. The operator then marks them ``leaving`` and
:func:`~.solve.assign` drains them through learners.
"""

from __future__ import annotations

from .errors import InvalidRequest
from .ids import member_sort_key
from .model import AssignRequest
from .problem import build_problem


def pick_leaving(request: AssignRequest, count: int) -> list[str]:
    """The ``count`` members (not already leaving) to remove, in natural order."""
    problem = build_problem(request)
    staying = [m for m, state in enumerate(problem.members) if not state.leaving]
    if count < 0:
        raise InvalidRequest(f"cannot remove a negative number of members ({count})")
    if count > len(staying) or (count == len(staying) and problem.task_ids and count):
        raise InvalidRequest(
            f"cannot remove {count} of the {len(staying)} members that are not leaving: "
            "at least one must stay to run the tasks"
        )
    held = [0] * len(problem.members)
    for t in range(len(problem.task_ids)):
        if not problem.stateful[t]:
            continue
        size = problem.state_bytes[t] if problem.sizes_known else 1
        holders = [*problem.standbys[t]]
        if problem.owner[t] >= 0:
            holders.append(problem.owner[t])
        for m in holders:
            held[m] += size or 0
    order = sorted(staying, key=lambda m: (held[m], -m))
    return sorted((problem.members[m].id for m in order[:count]), key=member_sort_key)
