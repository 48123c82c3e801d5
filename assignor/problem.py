"""From a validated request to the indexed problem the solvers work on.

This is where contradictions are caught (a member listed twice, a task owned by two members,
a lag for a task that does not exist...) and reported by name. What comes out is a
:class:`Problem`: tasks and members in canonical order, addressed by index, with one
:class:`ClientState` per present member, in the spirit of Kafka Streams' ``ClientState``.
A member named in ``current`` but absent from ``members`` is gone: its tasks become orphans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .errors import InvalidRequest
from .ids import member_sort_key, parse_task_id
from .model import AssignmentConfig, AssignRequest, MemberTasks, TaskSpec

NO_MEMBER = -1


@dataclass(slots=True)
class ClientState:
    """One present member and what it runs now (task indexes)."""

    id: str
    capacity: int
    rack: str | None
    leaving: bool
    active: set[int] = field(default_factory=set)
    standby: set[int] = field(default_factory=set)
    learning: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Problem:
    """A request in canonical, indexed form. Per-task tuples are indexed by task index."""

    task_ids: tuple[str, ...]
    subtopology: tuple[int, ...]
    stateful: tuple[bool, ...]
    state_bytes: tuple[int | None, ...]
    changelog_records: tuple[int | None, ...]  # lag of an empty copy
    members: tuple[ClientState, ...]
    owner: tuple[int, ...]  # present member running the task, or NO_MEMBER
    orphaned: tuple[bool, ...]  # its owner is gone
    lags: tuple[dict[int, int], ...]  # present member -> changelog lag
    standbys: tuple[tuple[int, ...], ...]  # present members with a standby, in order
    learners: tuple[tuple[int, ...], ...]  # present members with a learner, in order
    config: AssignmentConfig
    sizes_known: bool  # every stateful task has state_bytes: restores are weighed in bytes
    # what the balances and a hold's check read, hashable: tasks, members, the tolerance
    shape: tuple[object, ...]

    def caught_up(self, task: int, member: int) -> bool:
        """Owner, or a local copy within ``acceptable_recovery_lag`` (KIP-441)."""
        if self.owner[task] == member:
            return True
        lag = self.lags[task].get(member)
        return lag is not None and lag <= self.config.acceptable_recovery_lag

    def to_restore(self, task: int, member: int) -> int:
        """State bytes a copy on ``member`` still has to read: none once caught up; the
        part of the task its lag is of the whole changelog when both are known, so a
        learner halfway through costs half and is not dropped for a neighbour a few bytes
        smaller (sizes are disk usage and wobble); else the whole task."""
        if self.caught_up(task, member):
            return 0
        size = self.state_bytes[task] or 0
        lag, whole = self.lags[task].get(member), self.changelog_records[task]
        if lag is None or not whole:
            return size
        return -(-size * min(lag, whole) // whole)

    def eligible(self) -> list[int]:
        """Members that may be given work: present and not leaving."""
        return [m for m, state in enumerate(self.members) if not state.leaving]


def build_problem(request: AssignRequest) -> Problem:
    """Check the request for contradictions and index it; raises :class:`InvalidRequest`."""
    specs, subtopology = _tasks(request)
    index = {spec.id: i for i, spec in enumerate(specs)}
    members = _members(request, bool(specs))
    position = {state.id: m for m, state in enumerate(members)}
    roles = _Roles(len(specs))
    for member_id in sorted(request.current, key=member_sort_key):
        roles.read(
            member_id,
            request.current[member_id],
            position.get(member_id, NO_MEMBER),
            index,
            members,
        )
    lags: list[dict[int, int]] = [{} for _ in specs]
    for member_id, per_task in request.lags.items():
        m = position.get(member_id, NO_MEMBER)
        if m == NO_MEMBER:
            raise InvalidRequest(f"lags name member {member_id!r}, which is not in members")
        for name, lag in per_task.items():
            t = index.get(name)
            if t is None:
                raise InvalidRequest(
                    f"lags[{member_id!r}] names task {name!r}, which is not in tasks"
                )
            if lag < 0:  # pydantic forbids it already; kept for direct callers
                raise InvalidRequest(f"lags[{member_id!r}][{name!r}] is negative: {lag}")
            lags[t][m] = lag
    task_ids = tuple(spec.id for spec in specs)
    stateful = tuple(spec.stateful for spec in specs)
    return Problem(
        task_ids=task_ids,
        subtopology=subtopology,
        stateful=stateful,
        state_bytes=tuple(spec.state_bytes for spec in specs),
        changelog_records=tuple(spec.changelog_records for spec in specs),
        members=members,
        owner=tuple(roles.owner),
        orphaned=tuple(roles.orphaned),
        lags=tuple(lags),
        standbys=roles.per_task(roles.standbys),
        learners=roles.per_task(roles.learners),
        config=request.config,
        sizes_known=all(spec.state_bytes is not None for spec in specs if spec.stateful),
        shape=(
            task_ids,
            subtopology,
            stateful,
            tuple((m.id, m.capacity, m.rack, m.leaving) for m in members),
            request.config.balance_tolerance,
        ),
    )


def _tasks(request: AssignRequest) -> tuple[list[TaskSpec], tuple[int, ...]]:
    """Tasks in canonical order and their sub-topologies."""
    order, subtopologies = _order(tuple((spec.id, spec.stateful) for spec in request.tasks))
    return [request.tasks[i] for i in order], subtopologies


@lru_cache(maxsize=64)  # a caller asks again for the same tasks on every look
def _order(tasks: tuple[tuple[str, bool], ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Canonical order of ``(id, stateful)`` rows; a sub-topology's tasks must agree on
    being stateful."""
    keys: list[tuple[int, int]] = []
    seen_ids: set[str] = set()
    statefulness: dict[int, tuple[bool, str]] = {}
    for task_id, stateful in tasks:
        if task_id in seen_ids:
            raise InvalidRequest(f"task {task_id!r} is listed twice in tasks")
        seen_ids.add(task_id)
        key = parse_task_id(task_id)
        keys.append(key)
        seen = statefulness.setdefault(key[0], (stateful, task_id))
        if seen[0] != stateful:
            raise InvalidRequest(
                f"sub-topology {key[0]} mixes stateful and stateless tasks "
                f"({seen[1]!r} and {task_id!r}); a sub-topology's tasks share its stores"
            )
    order = sorted(range(len(tasks)), key=keys.__getitem__)
    return tuple(order), tuple(keys[i][0] for i in order)


def _members(request: AssignRequest, has_tasks: bool) -> tuple[ClientState, ...]:
    seen: set[str] = set()
    for member in request.members:
        if member.id in seen:
            raise InvalidRequest(f"member {member.id!r} is listed twice in members")
        seen.add(member.id)
    if has_tasks and not request.members:
        raise InvalidRequest("there are tasks but no members to run them")
    if has_tasks and all(member.leaving for member in request.members):
        raise InvalidRequest("every member is leaving: nobody is left to run the tasks")
    ordered = sorted(request.members, key=lambda member: member_sort_key(member.id))
    return tuple(ClientState(m.id, m.capacity, m.rack, m.leaving) for m in ordered)


class _Roles:
    """Who runs what in the current generation, checked as it is read."""

    def __init__(self, count: int) -> None:
        self.owner = [NO_MEMBER] * count
        self.orphaned = [False] * count
        self.active_on: dict[int, str] = {}
        self.count = count
        # task -> members, only for the tasks that have any (most have none)
        self.standbys: dict[int, list[int]] = {}
        self.learners: dict[int, list[int]] = {}

    def read(
        self,
        member_id: str,
        tasks: MemberTasks,
        m: int,
        index: dict[str, int],
        members: tuple[ClientState, ...],
    ) -> None:
        where = f"current[{member_id!r}]"
        held: set[int] = set()
        for role, names in (
            ("active", tasks.active),
            ("standby", tasks.standby),
            ("learning", tasks.learning),
        ):
            for name in names:
                t = index.get(name)
                if t is None:
                    raise InvalidRequest(
                        f"{where}.{role} names task {name!r}, which is not in tasks"
                    )
                if t in held:
                    raise InvalidRequest(f"{where} lists task {name!r} more than once")
                held.add(t)
                if role == "active":
                    self._active(t, name, member_id, m, members)
                elif m != NO_MEMBER and role == "standby":
                    members[m].standby.add(t)
                    self.standbys.setdefault(t, []).append(m)
                elif m != NO_MEMBER:
                    members[m].learning.add(t)
                    self.learners.setdefault(t, []).append(m)

    def per_task(self, by_task: dict[int, list[int]]) -> tuple[tuple[int, ...], ...]:
        """Per task index, its members in index order."""
        out: list[tuple[int, ...]] = [()] * self.count
        for t, ms in by_task.items():
            out[t] = tuple(sorted(ms))
        return tuple(out)

    def _active(
        self, t: int, name: str, member_id: str, m: int, members: tuple[ClientState, ...]
    ) -> None:
        if t in self.active_on:
            raise InvalidRequest(
                f"task {name!r} is active on two members: {self.active_on[t]!r} and {member_id!r}"
            )
        self.active_on[t] = member_id
        if m == NO_MEMBER:
            self.orphaned[t] = True  # its owner is gone
        else:
            self.owner[t] = m
            members[m].active.add(t)
