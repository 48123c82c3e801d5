"""The StreamApp's ``status``, written through its one model (``segue.operator.api.status``).

The decision core's :class:`~segue.operator.scaling.Assessment` and
:class:`~segue.operator.scaling.Memory` become a :class:`StreamAppStatus`; the patch sent
is a JSON merge patch from the status as last read to that one, so keys the machine
dropped (a joiner admitted, a handover done) go out as an explicit ``null``. A condition
keeps its ``lastTransitionTime`` while its status stays the same, as Kubernetes
conventions ask. Times are written in one format (:func:`to_timestamp`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from segue.operator.api.names import selector
from segue.operator.api.status import (
    AutoscalingStatus,
    Condition,
    Handover,
    HeldTarget,
    LearnerProgress,
    MemberStatus,
    ScalingMemory,
    StreamAppStatus,
    TaskError,
    find_condition,
    from_timestamp,
    to_timestamp,
)
from segue.operator.scaling import Condition as Decided
from segue.operator.scaling import Handover as Tracked
from segue.operator.scaling import Held, Memory, Plan, Progress


def memory_from_status(status: StreamAppStatus | None) -> Memory:
    scaling = (status.scaling if status else None) or ScalingMemory()
    return Memory(
        joining={k: from_timestamp(v) for k, v in scaling.joining.items()},
        leaving={k: from_timestamp(v) for k, v in scaling.leaving.items()},
        absent={k: from_timestamp(v) for k, v in scaling.absent.items()},
        handovers={t: Tracked(h.to, from_timestamp(h.since)) for t, h in scaling.handovers.items()},
        forced_at=from_timestamp(scaling.forced_at) if scaling.forced_at else None,
        rolling={k: from_timestamp(v) for k, v in scaling.rolling.items()},
        refenced={k: from_timestamp(v) for k, v in scaling.refenced.items()},
        held=_held_from(scaling.held),
        last_scale=(
            from_timestamp(status.last_scale_time) if status and status.last_scale_time else None
        ),
    )


def _held_from(held: HeldTarget | None) -> Held | None:
    if held is None:
        return None
    return Held(
        moves=dict(held.moves),
        standbys={t: tuple(ms) for t, ms in held.standbys.items()},
        basis=dict(held.basis),
        progress={
            t: Progress(
                p.member,
                p.lag,
                from_timestamp(p.since),
                p.lag if p.start_lag is None else p.start_lag,
                from_timestamp(p.started_at or p.since),
            )
            for t, p in held.progress.items()
        },
    )


def _held_to(held: Held | None) -> HeldTarget | None:
    if held is None:
        return None
    return HeldTarget(
        moves=dict(held.moves),
        standbys={t: list(ms) for t, ms in held.standbys.items()},
        basis=dict(held.basis),
        progress={
            t: LearnerProgress(
                member=p.member,
                lag=p.lag,
                since=to_timestamp(p.since),
                start_lag=p.start_lag,
                started_at=to_timestamp(p.started),
            )
            for t, p in held.progress.items()
        },
    )


def conditions_from_status(status: StreamAppStatus | None) -> dict[str, Decided]:
    return {
        c.type: Decided(c.type, c.status, c.reason, c.message)
        for c in (status.conditions if status else None) or []
    }


def build_status(
    plan: Plan,
    app: str,
    previous: StreamAppStatus | None,
    observed_generation: int,
    now: float,
    *,
    autoscaling: AutoscalingStatus | None = None,
) -> StreamAppStatus:
    """The status a plan says; ``autoscaling`` replaces the signal in it (None: keep)."""
    memory, status = plan.memory, plan.assessment
    before = previous.conditions if previous else None
    return StreamAppStatus(
        phase=status.phase,
        replicas=status.replicas,
        ready_replicas=status.ready_replicas,
        updated_replicas=status.updated_replicas,
        selector=selector(app),
        assignment_generation=status.generation,
        max_lag=status.max_lag,
        observed_generation=observed_generation,
        last_scale_time=to_timestamp(memory.last_scale) if memory.last_scale is not None else None,
        members=[
            MemberStatus(
                name=s.name,
                role=s.role,
                active=s.active,
                standby=s.standby,
                learning=s.learning,
                max_lag=s.max_lag,
                ready=s.ready,
                errors=[
                    TaskError(task=t, reason=f.reason, message=f.message)
                    for t, f in sorted(s.faults.items())
                ]
                or None,
            )
            for s in status.members
        ],
        conditions=[
            condition(c, find_condition(before, c.type), observed_generation, now)
            for c in status.conditions
        ],
        scaling=ScalingMemory(
            joining={k: to_timestamp(v) for k, v in memory.joining.items()},
            leaving={k: to_timestamp(v) for k, v in memory.leaving.items()},
            absent={k: to_timestamp(v) for k, v in memory.absent.items()},
            handovers={
                t: Handover(to=h.to, since=to_timestamp(h.since))
                for t, h in memory.handovers.items()
            },
            forced_at=to_timestamp(memory.forced_at) if memory.forced_at is not None else None,
            rolling={k: to_timestamp(v) for k, v in memory.rolling.items()},
            refenced={k: to_timestamp(v) for k, v in memory.refenced.items()},
            held=_held_to(memory.held),
        ),
        autoscaling=autoscaling or (previous.autoscaling if previous else None),
    )


def condition(
    decided: Decided, old: Condition | None, observed_generation: int, now: float
) -> Condition:
    """A condition as written: its transition time kept while its status holds."""
    same = old is not None and old.status == decided.status
    return Condition(
        type=decided.type,
        status=decided.status,
        reason=decided.reason,
        message=decided.message,
        last_transition_time=old.last_transition_time if old and same else to_timestamp(now),
        observed_generation=observed_generation,
    )


def status_patch(new: StreamAppStatus, previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The merge patch (RFC 7386) that turns the status as read into ``new``."""
    return {"status": merge_patch(previous or {}, new.model_dump(mode="json", exclude_none=True))}


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``new``, plus ``None`` for every key of ``old`` it lacks, at every object level
    (lists are replaced whole, as merge patches replace them)."""
    out: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        was = old.get(key)
        if isinstance(value, dict) and isinstance(was, dict):
            out[key] = merge_patch(was, value)
        else:
            out[key] = value
    return out


def changes(old: Mapping[str, Any], patch: Mapping[str, Any]) -> bool:
    """Would the merge ``patch`` change ``old``? A settled app's step decides the status
    it already has; not sending that saves the API server a write per app per look (a
    settled fleet of 100 apps went from 82 to 66 requests/s, measured with
    ``bench.fleet``)."""
    for key, value in patch.items():
        was = old.get(key)
        if value is None:
            if key in old:
                return True
        elif isinstance(value, dict) and isinstance(was, dict):
            if changes(was, value):
                return True
        elif was != value:
            return True
    return False
