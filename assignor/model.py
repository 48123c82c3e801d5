"""The boundary: pydantic models of a request and of a decision, as JSON users see them.

Field names are those of issue 3 and must not change: the operator, the simulator and
``segue assign`` all speak them. These models check shapes and ranges only; cross-field
checks (a task owned twice, an unknown task in ``lags``...) live in :mod:`.problem`,
which also turns a request into the indexed form the solvers work on.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, StringConstraints

from .ids import TASK_ID_PATTERN

TaskIdStr = Annotated[str, StringConstraints(pattern=TASK_ID_PATTERN)]
MemberIdStr = Annotated[str, StringConstraints(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSpec(_Strict):
    """One partition of one sub-topology; ``state_bytes`` lets the target weigh restores.

    ``changelog_records``: the lag of a copy holding nothing (records a restore from
    nothing reads). With it, a copy ``lag`` behind costs ``lag / changelog_records`` of
    ``state_bytes`` to finish, so a learner's progress counts (docs/assignor.md, "Costs").
    """

    id: TaskIdStr
    stateful: bool
    state_bytes: NonNegativeInt | None = None
    changelog_records: NonNegativeInt | None = None


class MemberSpec(_Strict):
    """One pod: capacity is its processing threads; a leaving member gets nothing."""

    id: MemberIdStr
    capacity: PositiveInt = 1
    rack: str | None = None
    leaving: bool = False


class MemberTasks(_Strict):
    """What one member runs in the current generation."""

    active: list[TaskIdStr] = Field(default_factory=list)
    standby: list[TaskIdStr] = Field(default_factory=list)
    learning: list[TaskIdStr] = Field(default_factory=list)


class AssignmentConfig(_Strict):
    """KIP-441's knobs plus seed 000's balancing factor.

    ``balance_tolerance`` is a fraction: a member may hold between
    ``floor(share * (1 - tolerance))`` and ``ceil(share * (1 + tolerance))`` tasks of each
    balance, where ``share`` is its capacity-weighted share. ``0`` (the default) is exact
    floor/ceil balance.
    """

    num_standby_replicas: NonNegativeInt = 0
    acceptable_recovery_lag: NonNegativeInt = 10_000
    max_warmup_replicas: PositiveInt = 2
    balance_tolerance: Annotated[float, Field(ge=0.0, le=10.0)] = 0.0


class AssignRequest(_Strict):
    """Everything a placement decision depends on; time is not an input, nor anything else."""

    tasks: list[TaskSpec] = Field(default_factory=list)
    members: list[MemberSpec] = Field(default_factory=list)
    current: dict[MemberIdStr, MemberTasks] = Field(default_factory=dict)
    lags: dict[MemberIdStr, dict[TaskIdStr, NonNegativeInt]] = Field(default_factory=dict)
    config: AssignmentConfig = Field(default_factory=AssignmentConfig)
    hold: dict[TaskIdStr, MemberIdStr] = Field(default_factory=dict)
    """Target actives to keep instead of solving for them, task -> member (the scaling
    state machine's held target, docs/assignor.md "Holding a target"); empty: solve."""
    hold_standbys: dict[TaskIdStr, list[MemberIdStr]] = Field(default_factory=dict)
    """With ``hold``: the target standbys to keep too, every stateful task -> members;
    empty: the standbys are solved for the held actives."""


class TargetTasks(_Strict):
    """A member's share of the balanced end state."""

    active: list[str]
    standby: list[str]


class AssignedTasks(_Strict):
    """What a member runs now, on the way to the target."""

    active: list[str]
    standby: list[str]
    learning: list[str]


class Stats(_Strict):
    """Numbers about a decision; ``rounds_hint`` assumes every learner catches up in a round."""

    tasks: int
    members: int
    moves: int = Field(description="tasks whose target owner differs from their current one")
    stateful_moves: int
    restores: int = Field(description="target replicas placed where no caught-up state is held")
    bytes_to_restore: int | None = Field(
        description="state bytes they still have to read, when every size is known"
    )
    handovers: int = Field(description="tasks whose owner changes in this assignment")
    learners: int
    learners_restoring: int = Field(description="learners not yet caught up (the warmup budget)")
    pending: int = Field(description="tasks not yet on their target owner")
    rounds_hint: int = Field(description="assignments still needed to reach the target")
    standby_replicas: int = Field(description="standbys per stateful task actually placed")
    same_rack_standbys: int
    standby_balance_relaxed: bool = Field(
        description="the stateful balance could not be met exactly (see docs/assignor.md)"
    )
    bytes_quantum: int = Field(description="byte resolution the restore cost was optimised at")


class Decision(_Strict):
    """The answer: the balanced target, what runs now, and numbers about both."""

    target: dict[str, TargetTasks]
    assignment: dict[str, AssignedTasks]
    stats: Stats
